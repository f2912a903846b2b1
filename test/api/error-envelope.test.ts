/**
 * Every response the API produces for bad input is the envelope {"status":"error","message":…} with a message that
 * says what is wrong, including the errors Fastify raises itself: unknown route (404), known path under another
 * method (405), body too large (413), path parameter too long (414), unsupported media type (415), bad JSON,
 * malformed URL, and the HTTP parser's errors on a real socket.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApiHarness, createApiHarness } from '../support/api-harness.ts';
import { waitUntil } from '../support/wait-until.ts';

let harness: ApiHarness;
afterEach(async () => {
  await harness.close();
});

function expectEnvelope(response: { statusCode: number; json(): unknown }, status: number, message: RegExp): void {
  expect(response.statusCode).toBe(status);
  expect(response.json()).toEqual({ status: 'error', message: expect.stringMatching(message) });
}

describe('the error envelope for framework errors', () => {
  it('404 for an unknown route, naming the method and path', async () => {
    harness = await createApiHarness();
    expectEnvelope(await harness.call('GET', '/no/such/route?x=1'), 404, /^no route GET \/no\/such\/route$/);
    expectEnvelope(await harness.call('POST', '/conversation/participants/p1/nothing', {}), 404, /no route POST/);
  });

  it('405 with Allow for a known path under another method', async () => {
    harness = await createApiHarness();
    const response = await harness.call('DELETE', '/conversation/participants');
    expectEnvelope(response, 405, /method DELETE is not allowed on \/conversation\/participants; use GET, HEAD, POST/);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
    const withParam = await harness.call('POST', '/conversation/participants/conv_1/history', {});
    expectEnvelope(withParam, 405, /not allowed on \/conversation\/participants\/conv_1\/history; use GET, HEAD$/);
    const patch = await harness.app.inject({ method: 'PATCH', url: '/admin/clock' });
    expectEnvelope(patch, 405, /method PATCH is not allowed on \/admin\/clock/);
  });

  it('413 for a body over API_BODY_LIMIT_BYTES, and nothing is stored', async () => {
    harness = await createApiHarness({ bodyLimitBytes: 1024 });
    const response = await harness.call('POST', '/conversation/participants', {
      phone_number: '+15551230001',
      name: 'x'.repeat(2000),
    });
    expectEnvelope(response, 413, /^request body is too large$/);
    expect(await harness.store.participants.list()).toEqual([]);
  });

  it('414 for a 3,000-character participant id in PUT /conversation/participants/{id}', async () => {
    harness = await createApiHarness();
    const response = await harness.call('PUT', `/conversation/participants/${'a'.repeat(3000)}`, { name: 'Bo' });
    expectEnvelope(
      response,
      414,
      /a path parameter in \/conversation\/participants\/a+… \(3027 characters\) is longer/,
    );
    expect(response.json().message.length).toBeLessThan(300);
    expect(response.body).not.toContain('FST_ERR');
  });

  it('415 for a body that is not JSON', async () => {
    harness = await createApiHarness();
    const form = await harness.call('POST', '/conversation/participants', 'phone_number=1', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expectEnvelope(form, 415, /application\/x-www-form-urlencoded.*send application\/json/);
    // Fastify parses text/plain itself: the route then refuses the string as a body.
    const text = await harness.call('POST', '/conversation/participants', 'phone', { 'content-type': 'text/plain' });
    expect(text.statusCode).toBe(400);
    expect(text.json().status).toBe('error');
    expect(await harness.store.participants.list()).toEqual([]);
  });

  it('400 for malformed JSON, an empty JSON body and a malformed URL', async () => {
    harness = await createApiHarness();
    expectEnvelope(await harness.call('POST', '/conversation/participants', '{"phone_number":'), 400, /not valid JSON/);
    expectEnvelope(await harness.call('POST', '/conversation/participants', ''), 400, /request body is empty/);
    const badUrl = await harness.app.inject({ method: 'GET', url: '/conversation/participants/%E0%A4%A' });
    expect(badUrl.statusCode).toBeGreaterThanOrEqual(400);
    expect(badUrl.statusCode).toBeLessThan(500);
    expect(badUrl.json()).toEqual({ status: 'error', message: expect.any(String) });
  });

  it('401 from the onRequest authentication hook', async () => {
    harness = await createApiHarness({ token: 'secret' });
    expectEnvelope(await harness.call('GET', '/conversation/participants'), 401, /missing Authorization/);
  });
});

describe('the HTTP parser errors on a real socket', () => {
  async function raw(port: number, request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.on('connect', () => socket.write(request));
      socket.setTimeout(10_000, () => reject(new Error('no answer')));
    });
  }

  it('answers a malformed request and oversized headers in the envelope', async () => {
    harness = await createApiHarness();
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const address = harness.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;

    const garbage = await raw(port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 4\d\d /);
    expect(JSON.parse(garbage.split('\r\n\r\n')[1] ?? '')).toEqual({ status: 'error', message: expect.any(String) });

    const huge = await raw(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(huge.split('\r\n\r\n')[1] ?? '')).toEqual({
      status: 'error',
      message: 'the request headers (or the URL) are too large',
    });
  });
});

describe('the 503 while the server shuts down', () => {
  it('answers a request that arrives during shutdown (on a busy keep-alive connection) in the envelope', async () => {
    let started: () => void = () => {};
    const slowStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    harness = await createApiHarness({
      extraChannelRoutes: () => [
        async (app) => {
          app.get('/slow', { config: { public: true } }, async () => {
            started();
            await released;
            return { status: 'ok', result: 'slow' };
          });
        },
      ],
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const address = harness.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;

    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise<void>((resolve) => {
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
    });
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    // A keep-alive connection busy with a slow request when shutdown begins; once that one is answered, the client
    // sends its next request on the same connection, into the shutting-down server.
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await slowStarted;
    const closing = harness.app.close();
    // Shutdown has begun once the server stops accepting connections: the refusal's preClose hook ran before that.
    await waitUntil('the server to stop listening', () => !harness.app.server.listening);
    const firstAnswer = new Promise((resolve) => socket.once('data', resolve));
    release();
    await firstAnswer;
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await ended;
    await closing;

    const responses = Buffer.concat(chunks)
      .toString('utf8')
      .split(/(?=HTTP\/1\.1 )/);
    expect(responses).toHaveLength(2);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /);
    const refused = responses[1] ?? '';
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(refused.split('\r\n\r\n')[1] ?? '')).toEqual({
      status: 'error',
      message: expect.stringContaining('shutting down'),
    });
  });
});
