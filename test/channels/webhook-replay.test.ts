/**
 * Replay protection of the webhook channel's inbound route, in process: the signing time and the message's own time
 * must be within `PROMPTPIPE_WEBHOOK_TOLERANCE`, and a signed message without an `id` is deduplicated by the hash of
 * what was signed. (The same cases against the real server process: test/e2e/webhook-replay-process.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { warnIfWebhookUnsigned } from '../../src/channels/webhook/webhook-inbound-route.ts';
import { signatureHeaders, signBody } from '../../src/http/webhook-signature.ts';
import { type ApiHarness, createApiHarness, START } from '../support/api-harness.ts';

const PATH = '/channels/webhook/messages';
const PHONE = '+15551230001';
const SECRET = 'webhook-secret';
/** 2001-09-09T01:46:40Z: a request captured long ago. */
const LONG_AGO = new Date(1_000_000_000_000);

let harness: ApiHarness;
afterEach(async () => {
  await harness.close();
});

async function post(raw: string, headers: Record<string, string>) {
  const response = await harness.call('POST', PATH, raw, headers);
  await harness.inbound.idle();
  return response;
}

async function recordedTexts(): Promise<string[]> {
  const participant = await harness.store.participants.getByPhone(PHONE);
  const transcript = participant ? await harness.store.transcript.list(participant.id) : [];
  return transcript.filter((entry) => entry.role === 'user').map((entry) => entry.content);
}

describe('a signed request replayed', () => {
  it.each([
    ['with an id', { from: PHONE, text: 'walked today', id: 'gw-7' }],
    ['without an id (deduplicated by the hash of what was signed)', { from: PHONE, text: 'walked today' }],
  ])('three times, %s, is one turn', async (_case, payload) => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    const raw = JSON.stringify(payload);
    const headers = signatureHeaders(SECRET, raw, new Date());
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await post(raw, headers);
      expect(response.statusCode).toBe(202);
      expect(response.json()).toEqual({ status: 'ok' });
    }
    expect(harness.flow.messages.map((message) => message.text)).toEqual(['walked today']);
    expect(await recordedTexts()).toEqual(['walked today']);
  });

  it('is not confused with the same words signed again at another time (a new message)', async () => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    const raw = JSON.stringify({ from: PHONE, text: 'Done' });
    const now = Date.now();
    expect((await post(raw, signatureHeaders(SECRET, raw, new Date(now - 2000)))).statusCode).toBe(202);
    expect((await post(raw, signatureHeaders(SECRET, raw, new Date(now)))).statusCode).toBe(202);
    expect(harness.flow.messages.map((message) => message.text)).toEqual(['Done', 'Done']);
  });
});

describe('times outside PROMPTPIPE_WEBHOOK_TOLERANCE', () => {
  it.each([
    ['signed in 2001', LONG_AGO],
    ['signed ten minutes ago', new Date(Date.now() - 10 * 60_000)],
    ['signed ten minutes ahead', new Date(Date.now() + 10 * 60_000)],
  ])('a request %s is refused with 401 and nothing is recorded', async (_case, signedAt) => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    const raw = JSON.stringify({ from: PHONE, text: 'replayed', id: 'gw-old' });
    const response = await post(raw, signatureHeaders(SECRET, raw, signedAt));
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      status: 'error',
      message: expect.stringContaining('outside PROMPTPIPE_WEBHOOK_TOLERANCE (5 min)'),
    });
    expect(harness.flow.messages).toEqual([]);
    expect(await recordedTexts()).toEqual([]);
    // Refused, not recorded: the same id is still free for the real message.
    expect((await post(raw, signatureHeaders(SECRET, raw, new Date()))).statusCode).toBe(202);
    expect(await recordedTexts()).toEqual(['replayed']);
  });

  it.each([
    ['signed', { webhookSecret: SECRET }],
    ['unsigned', {}],
  ])(
    'a %s message whose own timestamp is from 2001 is refused with 400 and nothing is recorded',
    async (_case, options) => {
      harness = await createApiHarness(options);
      await harness.enroll(PHONE);
      const raw = JSON.stringify({ from: PHONE, text: 'old', id: 'gw-2001', timestamp: LONG_AGO.toISOString() });
      const response = await post(raw, 'webhookSecret' in options ? signatureHeaders(SECRET, raw, new Date()) : {});
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toBe(
        "timestamp 2001-09-09T01:46:40.000Z is 8941 days before the server's time (2026-03-02T14:00:00.000Z), outside " +
          'PROMPTPIPE_WEBHOOK_TOLERANCE (5 min): a replayed or long-delayed request is refused',
      );
      expect(await recordedTexts()).toEqual([]);
      expect(await harness.store.inbound.listUnprocessed()).toEqual([]);
    },
  );

  it('compares a message timestamp with the study clock and honours a wider tolerance', async () => {
    harness = await createApiHarness({ webhookToleranceMs: 60 * 60_000 });
    await harness.enroll(PHONE);
    const late = new Date(START.getTime() - 50 * 60_000).toISOString();
    expect((await post(JSON.stringify({ from: PHONE, text: 'late', timestamp: late }), {})).statusCode).toBe(202);
    const tooLate = new Date(START.getTime() - 70 * 60_000).toISOString();
    expect((await post(JSON.stringify({ from: PHONE, text: 'too late', timestamp: tooLate }), {})).statusCode).toBe(
      400,
    );
    expect(await recordedTexts()).toEqual(['late']);
  });

  it('refuses a timestamp header that is not Unix seconds', async () => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    const raw = JSON.stringify({ from: PHONE, text: 'hi' });
    const timestamp = new Date().toISOString();
    const response = await post(raw, {
      'x-promptpipe-timestamp': timestamp,
      'x-promptpipe-signature': signBody(SECRET, raw, timestamp),
    });
    expect(response.statusCode).toBe(401);
    expect(response.json().message).toContain('X-PromptPipe-Timestamp must be Unix time in whole seconds');
    expect(await recordedTexts()).toEqual([]);
  });
});

describe('the older signature over the body alone', () => {
  it('is accepted when the signed body carries its own timestamp, and replays of it are one turn', async () => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    const raw = JSON.stringify({ from: PHONE, text: 'legacy gateway', timestamp: START.toISOString() });
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await post(raw, { 'x-promptpipe-signature': signBody(SECRET, raw) })).statusCode).toBe(202);
    }
    expect(await recordedTexts()).toEqual(['legacy gateway']);
  });

  it('is refused with 401 when nothing it signed says when, and nothing is recorded', async () => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    const raw = JSON.stringify({ from: PHONE, text: 'timeless', id: 'gw-9' });
    const response = await post(raw, { 'x-promptpipe-signature': signBody(SECRET, raw) });
    expect(response.statusCode).toBe(401);
    expect(response.json().message).toContain('missing X-PromptPipe-Timestamp: the signature covers no time');
    expect(await recordedTexts()).toEqual([]);
  });

  it('cannot be given a timestamp header afterwards (the signature would have to cover it)', async () => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    const raw = JSON.stringify({ from: PHONE, text: 'relabelled', timestamp: START.toISOString() });
    const response = await post(raw, {
      'x-promptpipe-signature': signBody(SECRET, raw),
      'x-promptpipe-timestamp': String(Math.floor(Date.now() / 1000)),
    });
    expect(response.statusCode).toBe(401);
    expect(response.json().message).toContain('wrong X-PromptPipe-Signature');
  });
});

describe('the start-up warning without a secret', () => {
  function recordingLog() {
    const warnings: string[] = [];
    return {
      warnings,
      log: { debug() {}, info() {}, error() {}, warn: (_: unknown, text: string) => warnings.push(text) },
    };
  }

  it('warns when the route is reachable beyond loopback without a secret', () => {
    const { warnings, log } = recordingLog();
    expect(warnIfWebhookUnsigned({ host: '0.0.0.0', secret: undefined, log })).toBe(true);
    expect(warnings).toEqual([expect.stringContaining('PROMPTPIPE_WEBHOOK_SECRET is not set')]);
  });

  it('stays quiet on loopback or with a secret', () => {
    const { warnings, log } = recordingLog();
    expect(warnIfWebhookUnsigned({ host: '127.0.0.1', secret: undefined, log })).toBe(false);
    expect(warnIfWebhookUnsigned({ host: '::1', secret: undefined, log })).toBe(false);
    expect(warnIfWebhookUnsigned({ host: '0.0.0.0', secret: SECRET, log })).toBe(false);
    expect(warnings).toEqual([]);
  });
});
