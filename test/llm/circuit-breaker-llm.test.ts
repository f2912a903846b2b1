import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiServer } from '../../src/api/api-server.ts';
import { AppError } from '../../src/domain/errors.ts';
import { createCircuitBreakerLlm } from '../../src/llm/circuit-breaker-llm.ts';
import { createFakeLlm } from '../../src/llm/fake-llm.ts';
import { createOpenAiCompatibleLlm, parseRetryAfter } from '../../src/llm/openai-compatible-llm.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { ParticipantService } from '../../src/participants/participant-service.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';

const START = new Date('2026-03-02T14:00:00.000Z');
const ask = { messages: [{ role: 'user' as const, content: 'hi' }] };

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe('circuit breaker', () => {
  it('opens after the threshold, refuses calls without reaching the model during the cool-down, then recovers', async () => {
    const clock = createManualClock(START);
    let down = true;
    const fake = createFakeLlm(() => (down ? { error: new AppError('llm_error', 'status 503') } : { content: 'ok' }));
    const llm = createCircuitBreakerLlm({ llm: fake, threshold: 3, cooldownMs: 30_000, now: () => clock.now() });
    expect(llm.health().status).toBe('ok');
    for (let index = 0; index < 3; index += 1) await expect(llm.chat(ask)).rejects.toThrow('status 503');
    expect(fake.requests).toHaveLength(3);
    await expect(llm.chat(ask)).rejects.toMatchObject({ code: 'unavailable' });
    expect(fake.requests).toHaveLength(3);
    expect(llm.health()).toMatchObject({ status: 'degraded', consecutive_failures: 3, last_error: 'status 503' });
    clock.set(new Date(START.getTime() + 30_000));
    down = false;
    await expect(llm.chat(ask)).resolves.toMatchObject({ content: 'ok' });
    expect(llm.health()).toEqual({ status: 'ok', consecutive_failures: 0, last_failure_at: expect.any(String) });
  });

  it('honours Retry-After of a 429 after the adapter retries: no call before the named time', async () => {
    let hits = 0;
    server = createServer((_request, response) => {
      hits += 1;
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '120' });
      response.end(JSON.stringify({ error: { message: 'rate limited' } }));
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const clock = createManualClock(START);
    const llm = createCircuitBreakerLlm({
      llm: createOpenAiCompatibleLlm({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        model: 'm',
        temperature: 0.1,
        timeoutMs: 5_000,
        maxRetries: 0,
      }),
      threshold: 5,
      cooldownMs: 1_000,
      now: () => clock.now(),
    });
    await expect(llm.chat(ask)).rejects.toThrow('429');
    expect(hits).toBe(1);
    clock.set(new Date(START.getTime() + 119_000));
    await expect(llm.chat(ask)).rejects.toMatchObject({ code: 'unavailable' });
    expect(hits).toBe(1);
    expect(llm.health().retry_after).toBe(new Date(START.getTime() + 120_000).toISOString());
    clock.set(new Date(START.getTime() + 120_000));
    await expect(llm.chat(ask)).rejects.toThrow('429');
    expect(hits).toBe(2);
  });

  it('parses Retry-After in seconds, milliseconds and as an HTTP date', () => {
    const now = Date.parse('2026-03-02T14:00:00Z');
    expect(parseRetryAfter(new Headers({ 'retry-after': '7' }), now)).toBe(7_000);
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250' }), now)).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Mon, 02 Mar 2026 14:01:00 GMT' }), now)).toBe(60_000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
  });

  it('GET /health stays healthy (200) and shows the model as degraded', async () => {
    const clock = createManualClock(START);
    const llm = createCircuitBreakerLlm({
      llm: createFakeLlm(() => ({ error: new AppError('llm_error', 'down') })),
      threshold: 1,
      cooldownMs: 60_000,
      now: () => clock.now(),
    });
    const app = createApiServer({
      config: { api: { host: '127.0.0.1', token: undefined, bodyLimitBytes: 1_000_000 } },
      store: { ping: async () => undefined, participants: { count: async () => 0 } as never },
      participants: {} as ParticipantService,
      clock,
      metrics: createMetrics({}),
      log: silentLog,
      llmHealth: () => llm.health(),
    });
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/health' })).json()).toMatchObject({ llm: { status: 'ok' } });
    await expect(llm.chat(ask)).rejects.toThrow('down');
    const response = await app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'healthy',
      llm: { status: 'degraded', consecutive_failures: 1, last_error: 'down', retry_after: expect.any(String) },
    });
    await app.close();
  });
});
