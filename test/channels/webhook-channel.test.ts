import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutboundMessage } from '../../src/channels/channel.ts';
import { createWebhookChannel } from '../../src/channels/webhook/webhook-channel.ts';
import { AppError } from '../../src/domain/errors.ts';
import { verifySignature } from '../../src/http/webhook-signature.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';

const TEXT: OutboundMessage = {
  id: 'out_1',
  participantId: 'conv_1',
  to: '+15551230001',
  kind: 'text',
  text: 'Time for your walk!',
};
const POLL: OutboundMessage = {
  id: 'out_2',
  participantId: 'conv_1',
  to: '+15551230001',
  kind: 'poll',
  text: 'Did you do it?',
  poll: { id: 'out_2', question: 'Did you do it?', options: ['Done', 'Next time'] },
};

let receiver: HttpReceiver;
beforeEach(async () => {
  receiver = await startHttpReceiver();
});
afterEach(async () => {
  await receiver.close();
});

describe('the webhook channel (outbound)', () => {
  it('POSTs the documented payload with the idempotency key', async () => {
    const channel = createWebhookChannel({ url: receiver.url, secret: undefined, timeoutMs: 2000, log: silentLog });
    await channel.send(TEXT);
    await channel.send(POLL);
    expect(receiver.requests).toHaveLength(2);
    const [text, poll] = receiver.requests;
    expect(text?.method).toBe('POST');
    expect(text?.url).toBe('/hook');
    expect(text?.headers['content-type']).toBe('application/json');
    expect(text?.headers['idempotency-key']).toBe('out_1');
    expect(text?.headers['x-promptpipe-signature']).toBeUndefined();
    expect(text?.headers['x-promptpipe-timestamp']).toBeUndefined();
    expect(JSON.parse(text?.body ?? '')).toEqual({
      id: 'out_1',
      participant_id: 'conv_1',
      to: '+15551230001',
      kind: 'text',
      text: 'Time for your walk!',
    });
    expect(JSON.parse(poll?.body ?? '')).toEqual({
      id: 'out_2',
      participant_id: 'conv_1',
      to: '+15551230001',
      kind: 'poll',
      text: 'Did you do it?',
      poll: { id: 'out_2', question: 'Did you do it?', options: ['Done', 'Next time'] },
    });
  });

  it('signs the time of sending with the exact body, like inbound requests', async () => {
    const clock = createManualClock(new Date('2026-03-02T14:00:00.750Z'));
    const channel = createWebhookChannel({ url: receiver.url, secret: 'shh', timeoutMs: 2000, log: silentLog, clock });
    await channel.send(TEXT);
    const [request] = receiver.requests;
    const body = request?.body ?? '';
    const signature = request?.headers['x-promptpipe-signature'] as string;
    expect(request?.headers['x-promptpipe-timestamp']).toBe('1772460000');
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(signature).toBe(`sha256=${createHmac('sha256', 'shh').update(`1772460000.${body}`).digest('hex')}`);
    expect(verifySignature('shh', body, signature, '1772460000')).toBe(true);
    expect(verifySignature('other', body, signature, '1772460000')).toBe(false);
    // The body alone, or another time, does not verify: the time cannot be stripped or replaced.
    expect(verifySignature('shh', body, signature)).toBe(false);
    expect(verifySignature('shh', body, signature, '1772460001')).toBe(false);
  });

  it('signs each attempt at its own time while the body stays identical', async () => {
    const clock = createManualClock(new Date('2026-03-02T14:00:00Z'));
    const channel = createWebhookChannel({ url: receiver.url, secret: 'shh', timeoutMs: 2000, log: silentLog, clock });
    await channel.send(TEXT);
    clock.advance(60_000);
    await channel.send(TEXT);
    const [first, retry] = receiver.requests;
    expect(retry?.body).toBe(first?.body);
    expect([first, retry].map((request) => request?.headers['x-promptpipe-timestamp'])).toEqual([
      '1772460000',
      '1772460060',
    ]);
    expect(retry?.headers['x-promptpipe-signature']).not.toBe(first?.headers['x-promptpipe-signature']);
  });

  it('returns the provider message id a gateway answers with', async () => {
    receiver.respond = () => ({ status: 201, body: '{"provider_message_id":"wamid.77"}' });
    const channel = createWebhookChannel({ url: receiver.url, secret: undefined, timeoutMs: 2000, log: silentLog });
    expect(await channel.send(TEXT)).toEqual({ providerMessageId: 'wamid.77' });
  });

  it.each([
    ['an empty body', '', {}],
    ['plain text', 'ok', {}],
    ['JSON without an id', '{"status":"queued"}', {}],
    ['a JSON array', '["wamid.1"]', {}],
    ['malformed JSON', '{"provider_message_id":', {}],
    ['an id after white space', '\n  {"provider_message_id":"wamid.78"}', { providerMessageId: 'wamid.78' }],
  ])('accepts any other 2xx answer (%s), with the id only when there is one', async (_what, body, expected) => {
    receiver.respond = () => ({ status: 200, body });
    const channel = createWebhookChannel({ url: receiver.url, secret: undefined, timeoutMs: 2000, log: silentLog });
    expect(await channel.send(TEXT)).toEqual(expected);
  });

  it.each([400, 404, 500, 503])('rejects (so the outbox retries) when the gateway answers %i', async (status) => {
    receiver.respond = () => ({ status, body: 'gateway trouble' });
    const channel = createWebhookChannel({ url: receiver.url, secret: undefined, timeoutMs: 2000, log: silentLog });
    const sending = channel.send(TEXT);
    await expect(sending).rejects.toBeInstanceOf(AppError);
    await expect(sending).rejects.toThrow(`answered ${status}: gateway trouble`);
  });

  it('rejects when the gateway does not answer in time', async () => {
    receiver.respond = () => ({ status: 200, delayMs: 500 });
    const channel = createWebhookChannel({ url: receiver.url, secret: undefined, timeoutMs: 50, log: silentLog });
    await expect(channel.send(TEXT)).rejects.toThrow(/webhook POST to .* failed/);
  });

  it('rejects when nothing listens', async () => {
    const url = receiver.url;
    await receiver.close();
    receiver = await startHttpReceiver();
    const channel = createWebhookChannel({ url, secret: undefined, timeoutMs: 1000, log: silentLog });
    await expect(channel.send(TEXT)).rejects.toThrow(/failed/);
  });

  it('only records (sends nothing) without a URL, and says the message was not delivered and why', async () => {
    const channel = createWebhookChannel({ url: undefined, secret: undefined, timeoutMs: 1000, log: silentLog });
    await expect(channel.send(TEXT)).resolves.toEqual({
      status: 'not_delivered',
      reason: 'PROMPTPIPE_WEBHOOK_URL is not set: the message is only recorded, not sent',
    });
    expect(receiver.requests).toEqual([]);
  });
});
