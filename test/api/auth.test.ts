import { afterEach, describe, expect, it } from 'vitest';
import { warnIfUnprotected } from '../../src/api/auth.ts';
import { isLoopbackHost } from '../../src/http/loopback.ts';
import { type ApiHarness, createApiHarness } from '../support/api-harness.ts';

const TOKEN = 's3cret-token';

describe('bearer-token authentication', () => {
  let harness: ApiHarness;
  afterEach(async () => {
    await harness.close();
  });

  it('requires the token on every API route, with a 401 envelope', async () => {
    harness = await createApiHarness({ token: TOKEN });
    for (const [method, url] of [
      ['GET', '/conversation/participants'],
      ['POST', '/conversation/participants'],
      ['GET', '/conversation/participants/conv_1/state'],
      ['POST', '/admin/clock'],
      ['GET', '/metrics'],
      ['GET', '/openapi.json'],
    ] as const) {
      const missing = await harness.call(method, url);
      expect(missing.statusCode, `${method} ${url}`).toBe(401);
      expect(missing.json()).toEqual({ status: 'error', message: 'missing Authorization: Bearer <token> header' });
    }
  });

  it('refuses a wrong token and accepts the right one', async () => {
    harness = await createApiHarness({ token: TOKEN });
    const wrong = await harness.call('GET', '/conversation/participants', undefined, { authorization: 'Bearer nope' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ status: 'error', message: 'invalid API token' });
    expect(wrong.headers['www-authenticate']).toBe('Bearer');
    const notBearer = await harness.call('GET', '/conversation/participants', undefined, { authorization: TOKEN });
    expect(notBearer.statusCode).toBe(401);
    const right = await harness.call('GET', '/conversation/participants', undefined, {
      authorization: `Bearer ${TOKEN}`,
    });
    expect(right.statusCode).toBe(200);
  });

  it('checks the token before validating the body', async () => {
    harness = await createApiHarness({ token: TOKEN });
    const response = await harness.call('POST', '/conversation/participants', '{not json');
    expect(response.statusCode).toBe(401);
  });

  it('leaves GET /health and the channel webhook open', async () => {
    harness = await createApiHarness({ token: TOKEN });
    expect((await harness.call('GET', '/health')).statusCode).toBe(200);
    await harness.enroll('+15551230001');
    const inbound = await harness.call('POST', '/channels/webhook/messages', { from: '+15551230001', text: 'hi' });
    expect(inbound.statusCode).toBe(202);
  });

  it('is off without a token', async () => {
    harness = await createApiHarness();
    expect((await harness.call('GET', '/conversation/participants')).statusCode).toBe(200);
  });
});

describe('the warning for an open API', () => {
  function recordingLog() {
    const warnings: string[] = [];
    const log = {
      debug: () => undefined,
      info: () => undefined,
      error: () => undefined,
      warn: (_data: Record<string, unknown>, message: string) => warnings.push(message),
    };
    return { log, warnings };
  }

  it('warns loudly without a token on a non-loopback address', () => {
    const { log, warnings } = recordingLog();
    expect(warnIfUnprotected({ host: '0.0.0.0', token: undefined, log })).toBe(true);
    expect(warnings[0]).toContain('PROMPTPIPE_API_TOKEN is not set');
  });

  it('stays quiet on loopback or with a token', () => {
    const { log, warnings } = recordingLog();
    expect(warnIfUnprotected({ host: '127.0.0.1', token: undefined, log })).toBe(false);
    expect(warnIfUnprotected({ host: '0.0.0.0', token: TOKEN, log })).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('is given when the server starts listening', async () => {
    const { log, warnings } = recordingLog();
    const harness = await createApiHarness({ host: '0.0.0.0', log });
    try {
      await harness.app.listen({ host: '127.0.0.1', port: 0 });
      expect(warnings.some((warning) => warning.includes('PROMPTPIPE_API_TOKEN is not set'))).toBe(true);
    } finally {
      await harness.close();
    }
  });

  it('knows the loopback addresses', () => {
    expect(['127.0.0.1', 'localhost', '::1', '[::1]', '127.1.2.3'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '192.168.1.2', 'example.com'].some(isLoopbackHost)).toBe(false);
  });
});
