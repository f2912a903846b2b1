import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { describeOutput } from '../support/server-process.ts';
import { schedulingCoach, startWebhookStudyServer, type WebhookStudyServer } from '../support/webhook-study-server.ts';

const API_TOKEN = 'adherence-e2e-api-token';
const PHONE = '+15551230501';
const SCHEDULING = { ask: 'Every morning at 09:00', fixedTime: '09:00', confirm: 'Scheduled.' };

let study: WebhookStudyServer;
/** The alert webhook, down at first: an adherence alert must survive a SIGKILL before its delivery. */
let alertHook: HttpReceiver;

beforeAll(async () => {
  alertHook = await startHttpReceiver();
  alertHook.respond = () => ({ status: 503 });
  study = await startWebhookStudyServer({
    apiToken: API_TOKEN,
    env: {
      ALERT_WEBHOOK_URL: alertHook.url,
      ALERT_WEBHOOK_SECRET: 'adherence-alert-hook-secret',
      ADHERENCE_MISSED_PROMPTS: '2',
      ADHERENCE_SILENT_DAYS: '3',
      ADHERENCE_CHECK_EVERY: '1h',
    },
    respond: schedulingCoach(SCHEDULING),
  });
}, 60_000);

afterAll(async () => {
  await study?.close();
  await alertHook?.close();
}, 30_000);

interface AlertView {
  id: string;
  kind: string;
  rule: string;
  deliveries: { route: string; status: string; last_error: string | null }[];
}

async function adherenceAlerts(): Promise<AlertView[]> {
  const response = await study.call('GET', '/alerts');
  const alerts = ((await response.json()) as { result: { alerts: AlertView[] } }).result.alerts;
  return alerts.filter((alert) => alert.kind === 'adherence').toReversed();
}

describe('adherence alerts, against the server process', () => {
  it('one alert per rule and episode; a message from the participant starts a new episode', {
    timeout: 120_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(study.server)));
    await study.enrollScheduled({ phone: PHONE, timezone: 'UTC' }, SCHEDULING);

    // Prompts on 3 and 4 March go unanswered: the missed-prompts rule fires once, on the second.
    await study.clockTo('2026-03-03T12:00:00.000Z');
    expect(await adherenceAlerts()).toEqual([]);
    await study.clockTo('2026-03-04T12:00:00.000Z');
    const first = await adherenceAlerts();
    expect(first.map((alert) => alert.rule)).toEqual(['2 daily prompts unanswered since 2026-03-02T14:00:00.000Z']);
    // Raised, its webhook delivery failed (the route is down); the server is killed before delivering it.
    const webhookOf = (alert: AlertView | undefined) =>
      alert?.deliveries.find((delivery) => delivery.route === 'webhook');
    await study.wait('a failed webhook attempt', async () => webhookOf((await adherenceAlerts())[0])?.last_error);
    expect(webhookOf((await adherenceAlerts())[0])?.status).toBe('pending');
    await study.killAndRestart();
    alertHook.respond = () => ({ status: 200 });
    // Resolved by staff, the silence goes on: no second alert for it; three silent days add the other rule, once.
    const firstId = first[0]?.id ?? '';
    expect((await study.call('POST', `/alerts/${firstId}/resolve`, { note: 'texted them' })).status).toBe(200);
    await study.clockTo('2026-03-07T12:00:00.000Z');
    // After the restart, every adherence alert reached the webhook (the first one at least once).
    await study.wait('the adherence alerts delivered', async () =>
      (await adherenceAlerts()).every((alert) => webhookOf(alert)?.status === 'delivered'),
    );
    expect(alertHook.requests.filter((request) => request.body.includes(firstId)).length).toBeGreaterThanOrEqual(2);
    expect((await adherenceAlerts()).map((alert) => alert.rule)).toEqual([
      '2 daily prompts unanswered since 2026-03-02T14:00:00.000Z',
      'no message for 3 days since 2026-03-02T14:00:00.000Z',
    ]);

    // A message ends the episode; two more unanswered prompts are a new one.
    await study.call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Sorry, I was away', id: 'm-2' });
    await study.wait('the reply', () => study.texts().includes('Coach heard: Sorry, I was away'));
    await study.clockTo('2026-03-09T12:00:00.000Z');
    const rules = (await adherenceAlerts()).map((alert) => alert.rule);
    expect(rules).toHaveLength(3);
    expect(rules[2]).toMatch(/^2 daily prompts unanswered since 2026-03-07T12:00:00/);
  });
});
