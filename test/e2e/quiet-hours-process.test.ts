import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeOutput, waitFor } from '../support/server-process.ts';
import { startWebhookStudyServer, type WebhookStudyServer } from '../support/webhook-study-server.ts';

const API_TOKEN = 'quiet-e2e-api-token';
const PHONE = '+15551230401';

let study: WebhookStudyServer;

beforeAll(async () => {
  study = await startWebhookStudyServer({
    apiToken: API_TOKEN,
    env: {
      QUIET_HOURS: '21:00-08:00',
    },
    respond: (request) => {
      const said = request.lastMessage?.content ?? '';
      if (request.lastMessage?.role === 'tool') return { content: 'Scheduled.' };
      if (said === 'Every evening at 22:10 please') {
        return {
          toolCalls: [{ name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '22:10' } }],
        };
      }
      return { content: said.includes('expecting a greeting') ? 'Hello!' : `Coach heard: ${said}` };
    },
  });
}, 60_000);

afterAll(async () => {
  await study?.close();
}, 30_000);

const call = (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> =>
  study.call(method, path, body);

const texts = (): string[] => study.texts();
/** Daily prompts sent: each is followed by its Done poll. */
const prompts = (): number => texts().filter((text) => text === 'Did you do it?').length;

const clockTo = (iso: string): Promise<void> => study.clockTo(iso);

describe('quiet hours, against the server process', () => {
  it('a prompt due at 22:00 local goes out at 08:00 local; a reply at 23:00 is not held', {
    timeout: 90_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(`${describeOutput(study.server)}\n${texts().join('\n')}`));
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 20_000, [study.server]);
    await call('POST', '/conversation/participants', {
      phone_number: PHONE,
      name: 'Ada',
      timezone: 'America/New_York',
    });
    await wait('the greeting', () => texts().includes('Hello!'));
    await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Every evening at 22:10 please', id: 'm-1' });
    await wait('the schedule', () => texts().includes('Scheduled.'));

    // 22:00 (the prompt's time, 10 minutes before 22:10) and 23:00 in New York: nothing proactive, a reply at once.
    await clockTo('2026-03-03T03:00:00.000Z');
    await clockTo('2026-03-03T04:00:00.000Z');
    expect(prompts()).toBe(0);
    await call('POST', '/channels/webhook/messages', { from: PHONE, text: 'Still awake', id: 'm-2' });
    await wait('the reply at 23:00', () => texts().includes('Coach heard: Still awake'));

    await clockTo('2026-03-03T12:59:00.000Z');
    expect(prompts()).toBe(0);
    // 08:00 in New York: the prompt goes out, once.
    await clockTo('2026-03-03T13:01:00.000Z');
    await wait('the prompt at 08:00', () => prompts() === 1);
    await clockTo('2026-03-03T20:00:00.000Z');
    expect(prompts()).toBe(1);
  });
});
