/**
 * STOP and START over the webhook channel, wired as in production (no model configured: a keyword never reaches it).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPT_IN_CONFIRMATION, OPT_OUT_CONFIRMATION } from '../../src/channels/channel-texts.ts';
import { loadConfig } from '../../src/config.ts';
import type { Application } from '../../src/main.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

const PHONE = '+15551230001';
let gateway: HttpReceiver;
let app: Application;

function startApp(environment: Record<string, string> = {}): Promise<Application> {
  return startTestApplication({ PROMPTPIPE_WEBHOOK_URL: gateway.url, ...environment });
}

const texts = (): string[] => gateway.requests.map((request) => JSON.parse(request.body).text as string);

async function enroll(): Promise<string> {
  const enrolled = await app.server.inject({
    method: 'POST',
    url: '/conversation/participants',
    payload: { phone_number: PHONE, timezone: 'America/Toronto' },
  });
  expect(enrolled.statusCode).toBe(201);
  await waitUntil('the greeting', () => gateway.requests.length === 1);
  return enrolled.json().result.id as string;
}

async function say(text: string, id: string): Promise<void> {
  const response = await app.server.inject({
    method: 'POST',
    url: '/channels/webhook/messages',
    payload: { from: PHONE, text, id },
  });
  expect(response.statusCode).toBe(202);
  await app.inbound.idle();
}

const statusOf = async (id: string): Promise<string> =>
  (await app.server.inject({ url: `/conversation/participants/${id}` })).json().result.status;

beforeEach(async () => {
  gateway = await startHttpReceiver();
});
afterEach(async () => {
  await app.stop();
  await gateway.close();
});

describe('opt-out', () => {
  it('withdraws on " stop " (any case, spaces ignored), cancels every job, confirms once, and answers no turn', async () => {
    app = await startApp();
    const id = await enroll();
    await app.server.inject({
      method: 'POST',
      url: `/conversation/participants/${id}/transition`,
      payload: { target_state: 'FEEDBACK' },
    });
    await app.store.jobs.enqueue(
      {
        id: 'job_reminder',
        kind: 'daily_prompt_reminder',
        participantId: id,
        runAt: new Date('2026-03-02T20:00:00Z'),
        payload: {},
        dedupKey: `daily_prompt_reminder:${id}`,
      },
      app.clock.now(),
    );

    await say('  s T o P ', 'gw-stop');
    expect(await statusOf(id)).toBe('withdrawn');
    const pending = await app.store.jobs.listPending({ participantId: id });
    expect(pending.filter((job) => job.kind !== 'deliver_message')).toEqual([]);
    await waitUntil('the confirmation', () => texts().includes(OPT_OUT_CONFIRMATION));
    const events = await app.store.events.list({ participantId: id, type: 'participant-opted-out' });
    expect(events.map((event) => event.data['keyword'])).toEqual(['STOP']);
    const history = (await app.server.inject({ url: `/conversation/participants/${id}/history` })).json().result;
    expect(history.map((entry: { kind: string }) => entry.kind)).toEqual(['reply', 'message', 'notice']);

    // A second STOP is recorded, but confirmed no more. Once it is processed (`say` waits for that), a confirmation
    // would already be in the transcript (the outbox records a message before queueing its delivery): none is.
    await say('STOP', 'gw-stop-2');
    const after = (await app.server.inject({ url: `/conversation/participants/${id}/history` })).json().result;
    expect(after.filter((entry: { kind: string }) => entry.kind === 'notice')).toHaveLength(1);
    expect(texts().filter((text) => text === OPT_OUT_CONFIRMATION)).toHaveLength(1);
  });

  it('brings an opted-out participant back with START and re-arms nothing they did not have', async () => {
    app = await startApp();
    const id = await enroll();
    await say('unsubscribe', 'gw-1');
    expect(await statusOf(id)).toBe('withdrawn');
    await say('Start', 'gw-2');
    expect(await statusOf(id)).toBe('active');
    await waitUntil('the welcome back', () => texts().includes(OPT_IN_CONFIRMATION));
    const events = await app.store.events.list({ participantId: id, type: 'participant-opted-in' });
    expect(events).toHaveLength(1);
  });

  it('keeps a participant the organiser withdrew withdrawn when they send START', async () => {
    app = await startApp();
    const id = await enroll();
    await say('STOP', 'gw-1');
    await app.server.inject({ method: 'PUT', url: `/conversation/participants/${id}`, payload: { status: 'active' } });
    await app.server.inject({
      method: 'PUT',
      url: `/conversation/participants/${id}`,
      payload: { status: 'withdrawn' },
    });
    await say('START', 'gw-2');
    expect(await statusOf(id)).toBe('withdrawn');
    expect(texts()).not.toContain(OPT_IN_CONFIRMATION);
    const ignored = await app.store.events.list({ participantId: id, type: 'message-ignored' });
    expect(ignored).toHaveLength(1);
  });

  it('uses OPT_OUT_KEYWORDS instead of the defaults', async () => {
    app = await startApp({ OPT_OUT_KEYWORDS: 'alto, baja' });
    const id = await enroll();
    await say('BAJA', 'gw-1');
    expect(await statusOf(id)).toBe('withdrawn');
    expect(loadConfig({ OPT_OUT_KEYWORDS: 'alto, baja' }).channel.optOutKeywords).toEqual(['ALTO', 'BAJA']);
  });
});

describe('channels at enrolment', () => {
  it('accepts an enabled channel, defaults to the first, and names the allowed values otherwise', async () => {
    app = await startApp({ PROMPTPIPE_CHANNEL: 'webhook, console' });
    const enroll = (payload: Record<string, unknown>) =>
      app.server.inject({ method: 'POST', url: '/conversation/participants', payload });
    const byDefault = await enroll({ phone_number: '+15551230011' });
    expect(byDefault.json().result.channel).toBe('webhook');
    const onConsole = await enroll({ phone_number: '+15551230012', channel: 'console' });
    expect(onConsole.statusCode).toBe(201);
    expect(onConsole.json().result.channel).toBe('console');
    const unknown = await enroll({ phone_number: '+15551230013', channel: 'sms' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual({
      status: 'error',
      message: 'channel must be one of webhook, console (got "sms")',
    });
    expect((await app.store.participants.getByPhone('+15551230013'))?.id).toBeUndefined();
  });

  it('refuses an unknown or repeated channel in PROMPTPIPE_CHANNEL at start-up', () => {
    expect(() => loadConfig({ PROMPTPIPE_CHANNEL: 'webhook,carrier-pigeon' })).toThrow(/unknown: carrier-pigeon/);
    expect(() => loadConfig({ PROMPTPIPE_CHANNEL: 'webhook,webhook' })).toThrow(/lists a channel twice/);
    expect(loadConfig({ PROMPTPIPE_CHANNEL: 'console,webhook' }).channel.enabled).toEqual(['console', 'webhook']);
  });
});
