import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeOutput } from '../support/server-process.ts';
import { schedulingCoach, startWebhookStudyServer, type WebhookStudyServer } from '../support/webhook-study-server.ts';

const API_TOKEN = 'quiet-e2e-api-token';
const PHONE = '+15551230401';
const SCHEDULING = { ask: 'Every evening at 22:10 please', fixedTime: '22:10', confirm: 'Scheduled.' };

let study: WebhookStudyServer;

beforeAll(async () => {
  study = await startWebhookStudyServer({
    apiToken: API_TOKEN,
    env: {
      QUIET_HOURS: '21:00-08:00',
    },
    respond: schedulingCoach(SCHEDULING),
  });
}, 60_000);

afterAll(async () => {
  await study?.close();
}, 30_000);

describe('quiet hours, against the server process', () => {
  it('a prompt due at 22:00 local goes out at 08:00 local; a reply at 23:00 is not held', {
    timeout: 90_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(`${describeOutput(study.server)}\n${study.texts().join('\n')}`));
    await study.enrollScheduled({ phone: PHONE, timezone: 'America/New_York' }, SCHEDULING);

    // 22:00 (the prompt's time, 10 minutes before 22:10) and 23:00 in New York: nothing proactive, a reply at once.
    await study.clockTo('2026-03-03T03:00:00.000Z');
    await study.clockTo('2026-03-03T04:00:00.000Z');
    expect(study.prompts()).toBe(0);
    await study.call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Still awake', id: 'm-2' });
    await study.wait('the reply at 23:00', () => study.texts().includes('Coach heard: Still awake'));

    await study.clockTo('2026-03-03T12:59:00.000Z');
    expect(study.prompts()).toBe(0);
    // 08:00 in New York: the prompt goes out, once.
    await study.clockTo('2026-03-03T13:01:00.000Z');
    await study.wait('the prompt at 08:00', () => study.prompts() === 1);
    await study.clockTo('2026-03-03T20:00:00.000Z');
    expect(study.prompts()).toBe(1);
  });
});
