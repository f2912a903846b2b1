import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAFF_MESSAGE_MARK } from '../../src/safety/takeover-service.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { describeOutput, waitFor } from '../support/server-process.ts';
import { startWebhookStudyServer, type WebhookStudyServer } from '../support/webhook-study-server.ts';

const API_TOKEN = 'takeover-e2e-api-token';
const PHONE = '+15551230201';
const GREETING = 'Hi! Which habit would you like to build?';
const STAFF_TEXT = 'Hi, this is Sam from the study team. How are you feeling today?';
const PARTICIPANT_ANSWER = 'Better now, thanks for checking on me';

let study: WebhookStudyServer;
/** The alert webhook: the idle reminder goes there, the notification of a participant's message does not. */
let alertHook: HttpReceiver;

beforeAll(async () => {
  alertHook = await startHttpReceiver();
  study = await startWebhookStudyServer({
    apiToken: API_TOKEN,
    env: {
      TAKEOVER_IDLE_AFTER: '20m',
      ALERT_WEBHOOK_URL: alertHook.url,
      ALERT_WEBHOOK_SECRET: 'takeover-alert-hook-secret',
    },
    respond: (request) => {
      const said = request.lastMessage?.content ?? '';
      return { content: said.includes('expecting a greeting') ? GREETING : `Coach heard: ${said}` };
    },
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
  urgency: string;
  status: string;
  resolved_by: string | null;
  deliveries: { route: string }[];
}

const call = (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> =>
  study.call(method, path, body);

const delivered = (): { kind: string; text?: string; question?: string }[] =>
  study.gateway.requests.map(
    (request) => JSON.parse(request.body) as { kind: string; text?: string; question?: string },
  );
const texts = (): string[] => delivered().map((message) => message.text ?? message.question ?? '');

async function transcript(participantId: string): Promise<{ role: string; content: string }[]> {
  const response = await call('GET', `/conversation/participants/${participantId}/history`);
  return ((await response.json()) as { result: { role: string; content: string }[] }).result;
}

describe('taking over a conversation, against the server process', () => {
  it('staff reply, the participant answers without a bot answer, hand back, the coach sees the exchange', {
    timeout: 90_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(study.server)));
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 20_000, [study.server]);
    const enrolled = await call('POST', '/conversation/participants', { phone_number: PHONE, name: 'Ada' });
    const participantId = ((await enrolled.json()) as { result: { id: string } }).result.id;
    await wait('the greeting', () => texts().includes(GREETING));
    const base = `/conversation/participants/${participantId}`;

    // Bad input changes nothing: no staff message before a takeover, an unknown timers choice.
    expect((await call('POST', `${base}/staff-messages`, { text: 'too early' })).status).toBe(409);
    expect((await call('POST', `${base}/takeover`, { timers: 'stop' })).status).toBe(400);
    const taken = await call('POST', `${base}/takeover`, { timers: 'pause' });
    expect(taken.status).toBe(201);
    expect(((await taken.json()) as { result: { taken_by: string } }).result.taken_by).toBe('PROMPTPIPE_API_TOKEN');
    expect((await call('POST', `${base}/takeover`, {})).status).toBe(409);

    expect((await call('POST', `${base}/staff-messages`, { text: STAFF_TEXT })).status).toBe(201);
    const poll = { question: 'Would you like a call from us?', options: ['Yes', 'No'] };
    expect((await call('POST', `${base}/staff-messages`, { poll })).status).toBe(201);
    await wait('the staff messages', () => texts().includes(STAFF_TEXT) && texts().includes(poll.question));

    const modelCallsBefore = study.model.requests.length;
    const reply = await call('POST', '/channels/webhook/messages', {
      from: PHONE,
      text: PARTICIPANT_ANSWER,
      id: 'p-1',
    });
    expect(reply.status).toBe(202);
    await wait('the answer recorded', async () =>
      (await transcript(participantId)).some((entry) => entry.content === PARTICIPANT_ANSWER),
    );
    expect(study.model.requests.length).toBe(modelCallsBefore);
    expect(texts()).toEqual([GREETING, STAFF_TEXT, poll.question]);
    const alerts = async (): Promise<AlertView[]> =>
      ((await (await call('GET', '/alerts')).json()) as { result: { alerts: AlertView[] } }).result.alerts;

    // The staff member is notified on the dashboard: one low-urgency notification for the unanswered spell, however
    // many messages, and no coach turn.
    const notified = await alerts();
    expect(notified.map((alert) => [alert.kind, alert.rule, alert.urgency, alert.status])).toEqual([
      ['takeover-message', 'for PROMPTPIPE_API_TOKEN', 'normal', 'open'],
    ]);
    expect(notified[0]?.deliveries.map((delivery) => delivery.route)).toEqual(['dashboard']);
    expect(
      (await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Are you there?', id: 'p-1b' })).status,
    ).toBe(202);
    await wait('the second message recorded', async () =>
      (await transcript(participantId)).some((entry) => entry.content === 'Are you there?'),
    );
    expect((await alerts()).map((alert) => alert.kind)).toEqual(['takeover-message']);
    // Once read (acknowledged), the next message notifies again.
    expect((await call('POST', `/alerts/${notified[0]?.id}/acknowledge`, {})).status).toBe(200);
    expect((await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Hello?', id: 'p-1d' })).status).toBe(
      202,
    );
    await wait('a second notification', async () =>
      (await alerts()).some((alert) => alert.kind === 'takeover-message' && alert.status === 'open'),
    );
    expect((await alerts()).map((alert) => [alert.kind, alert.status])).toEqual([
      ['takeover-message', 'open'],
      ['takeover-message', 'acknowledged'],
    ]);
    expect(study.model.requests.length).toBe(modelCallsBefore);

    // Left without a staff message for longer than TAKEOVER_IDLE_AFTER: one reminder alert, on every route.
    expect((await call('POST', '/admin/clock', { advance_ms: 45 * 60_000 })).status).toBe(200);
    const reminded = await alerts();
    expect(reminded.map((alert) => alert.kind)).toEqual(['takeover-idle', 'takeover-message', 'takeover-message']);
    expect(reminded[0]?.deliveries.map((delivery) => delivery.route)).toEqual(['dashboard', 'webhook']);
    await wait('the reminder on the alert webhook', () => alertHook.requests.length === 1);
    expect(alertHook.requests[0]?.body).toContain('takeover-idle');

    // The next staff message reads the notifications; a later participant message raises a new one.
    expect((await call('POST', `${base}/staff-messages`, { text: 'Sorry, I am back' })).status).toBe(201);
    const read = (await alerts()).filter((alert) => alert.kind === 'takeover-message');
    expect(read.map((alert) => [alert.status, alert.resolved_by])).toEqual([
      ['resolved', 'PROMPTPIPE_API_TOKEN'],
      ['resolved', 'PROMPTPIPE_API_TOKEN'],
    ]);
    expect((await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'OK', id: 'p-1c' })).status).toBe(
      202,
    );
    await wait('a new notification', async () =>
      (await alerts()).some((alert) => alert.kind === 'takeover-message' && alert.status === 'open'),
    );

    expect((await call('POST', `${base}/handback`)).status).toBe(200);
    // Handing back reads it too; the webhook never carried a notification.
    expect((await alerts()).filter((alert) => alert.status === 'open').map((alert) => alert.kind)).toEqual([
      'takeover-idle',
    ]);
    expect(alertHook.requests.every((request) => !request.body.includes('takeover-message'))).toBe(true);
    expect((await call('POST', `${base}/staff-messages`, { text: 'after' })).status).toBe(409);
    const next = await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Back to walking', id: 'p-2' });
    expect(next.status).toBe(202);
    await wait('the coach answers again', () => texts().includes('Coach heard: Back to walking'));
    const request = study.model.requests.at(-1);
    const contents = request?.body.messages.map((message) => `${message.role}: ${message.content}`) ?? [];
    const staffAt = contents.indexOf(`assistant: ${STAFF_MESSAGE_MARK} ${STAFF_TEXT}`);
    expect(staffAt).toBeGreaterThan(0);
    expect(contents.slice(staffAt + 1)).toEqual([
      `assistant: ${STAFF_MESSAGE_MARK} ${poll.question}\n1. Yes\n2. No`,
      `user: ${PARTICIPANT_ANSWER}`,
      'user: Are you there?',
      'user: Hello?',
      `assistant: ${STAFF_MESSAGE_MARK} Sorry, I am back`,
      'user: OK',
      'user: Back to walking',
    ]);
  });
});
