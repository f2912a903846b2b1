/**
 * `GET /receipts`, `POST /response`, `GET /responses` and the `/stats` figures against the original PromptPipe's
 * docs/api.md: `Receipt {to, status, time}` and `Response {from, body, time}` (Unix seconds) in the envelope,
 * `POST /response` answers `201 {"status":"ok","message":"Response recorded successfully"}` and sets the time itself,
 * `/stats` has `total_responses`, `responses_per_sender`, `avg_response_length`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OriginalApp, START, startOriginalApp } from './original-app.ts';

let original: OriginalApp;
const NOW_SECONDS = Date.parse(START) / 1000;

beforeEach(async () => {
  original = await startOriginalApp();
});
afterEach(async () => {
  await original.close();
});

describe('receipts, responses and stats (the original API)', () => {
  it('records a response with the server time, whatever time was sent, and lists it', async () => {
    const recorded = await original.call('POST', '/response', { from: '15551234567', body: 'Did it!', time: 12 });
    expect(recorded).toEqual({ status: 201, body: { status: 'ok', message: 'Response recorded successfully' } });
    const listed = await original.call('GET', '/responses');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      status: 'ok',
      result: [{ from: '+15551234567', body: 'Did it!', time: NOW_SECONDS, source: 'api' }],
    });
  });

  it.each([
    ['no sender', { body: 'x', time: 1 }, /from is required/],
    ['a sender that is no phone number', { from: 'invalid-phone', body: 'x' }, /international form/],
    ['an empty body', { from: '15551234567', body: '' }, /body is required/],
    ['a time that is not a number', { from: '15551234567', body: 'x', time: 'invalid-time' }, /time: must be a Unix/],
  ])('refuses a response with %s (400; the original stored it) and stores nothing', async (_case, body, message) => {
    const answer = await original.call('POST', '/response', body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ status: 'error', message: expect.stringMatching(message) });
    expect((await original.call('GET', '/responses')).body['result']).toEqual([]);
  });

  it('lists messages received on a channel as responses too, filtered by sender', async () => {
    await original.app.participants.enroll({ phoneNumber: '+15551230001' }, { greet: false });
    await original.call('POST', '/channels/webhook/messages', { from: '+15551230001', text: 'hello coach' });
    await original.call('POST', '/response', { from: '+15557654321', body: 'someone else' });
    const mine = await original.call('GET', '/responses?from=15551230001');
    expect(mine.body['result']).toEqual([
      { from: '+15551230001', body: 'hello coach', time: NOW_SECONDS, source: 'message' },
    ]);
    const limited = await original.call('GET', '/responses?limit=1');
    expect(limited.body['result']).toHaveLength(1);
    expect((await original.call('GET', '/responses?since=yesterday')).status).toBe(400);
  });

  it('lists a receipt for each delivery fact of a sent message', async () => {
    await original.call('POST', '/send', { to: '15551234567', body: 'Receipt test' });
    await original.waitForDeliveries(1);
    const receipts = await original.call('GET', '/receipts');
    expect(receipts.status).toBe(200);
    expect(receipts.body['result']).toEqual([
      expect.objectContaining({ to: '+15551234567', status: 'sent', time: NOW_SECONDS, source: 'delivery' }),
    ]);
    const other = await original.call('GET', '/receipts?to=%2B15550000000');
    expect(other.body['result']).toEqual([]);
  });

  it("adds the original's response figures to GET /stats, beside PromptPipe's own", async () => {
    await original.call('POST', '/response', { from: '15551234567', body: 'abcd' });
    await original.call('POST', '/response', { from: '15551234567', body: 'ab' });
    await original.call('POST', '/response', { from: '15557654321', body: 'abcdefghi' });
    const stats = await original.call('GET', '/stats');
    expect(stats.status).toBe(200);
    expect(stats.body['result']).toMatchObject({
      total_responses: 3,
      responses_per_sender: { '+15551234567': 2, '+15557654321': 1 },
      avg_response_length: 5,
      participants: expect.any(Object),
      totals: expect.any(Object),
    });
  });

  it('refuses other methods on the original paths with 405', async () => {
    for (const [method, path] of [
      ['POST', '/receipts'],
      ['DELETE', '/receipts'],
      ['POST', '/responses'],
      ['POST', '/stats'],
      ['GET', '/schedule'],
    ] as const) {
      expect((await original.call(method, path)).status, `${method} ${path}`).toBe(405);
    }
  });

  it('describes every original path in the OpenAPI document', async () => {
    const document = await original.call('GET', '/openapi.json');
    const paths = Object.keys(document.body['paths'] as Record<string, unknown>);
    expect(paths).toEqual(
      expect.arrayContaining(['/send', '/schedule', '/receipts', '/response', '/responses', '/timers', '/timers/{id}']),
    );
  });
});
