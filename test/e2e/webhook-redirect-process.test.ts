/**
 * The real `promptpipe serve` delivering to a webhook gateway that answers `307 Temporary Redirect`: the delivery is a
 * failure the outbox retries later, the gateway received the POST exactly once, and nothing is sent to the address
 * the redirect names (re-sending a participant's message elsewhere is not the HTTP client's decision). The client
 * used to send the POST a second time to the same address, then on to the redirect's.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopServer, waitFor } from '../support/server-process.ts';

const API_TOKEN = 'e2e-webhook-redirect-token';
const auth = { authorization: `Bearer ${API_TOKEN}` };

let stateDir = '';
let server: ServerProcess | undefined;
const received: { url: string; idempotencyKey: string; body: string }[] = [];
const gateway = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    received.push({
      url: request.url ?? '',
      idempotencyKey: String(request.headers['idempotency-key']),
      body: Buffer.concat(chunks).toString(),
    });
    if (request.url === '/deliver') response.writeHead(307, { location: '/elsewhere' });
    response.end();
  });
});

beforeAll(async () => {
  gateway.listen(0, '127.0.0.1');
  await once(gateway, 'listening');
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-webhook-redirect-'));
  server = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    LOG_LEVEL: 'warn',
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    PROMPTPIPE_WEBHOOK_URL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/deliver`,
  });
}, 60_000);

afterAll(async () => {
  if (server) await stopServer(server, 10_000);
  gateway.closeAllConnections();
  gateway.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

describe('a webhook gateway answering a delivery with a redirect', () => {
  it('receives the POST exactly once; the attempt fails with the 3xx and nothing goes to the redirect', async () => {
    // Enrolling sends the participant a first message (here "assistant unavailable": no model is configured).
    const enrolled = await fetch(`${server?.baseUrl}/conversation/participants`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: '+15551230091' }),
    });
    expect(enrolled.status).toBe(201);

    // The attempt is over once the server says so; the outbox's retry comes 30 s later at the earliest.
    const failure = await waitFor(
      'a delivery attempt to fail with the 307',
      () =>
        server?.output
          .join('')
          .split('\n')
          .find((line) => line.includes('the outbox retries it') && line.includes('answered 307')),
      20_000,
      [server],
    );
    const outboundId = (JSON.parse(failure) as { outboundId: string }).outboundId;
    const attempts = received.filter((request) => request.idempotencyKey === outboundId);
    expect(attempts.map((request) => request.url)).toEqual(['/deliver']);
    expect(received.filter((request) => request.url !== '/deliver')).toEqual([]);
  }, 60_000);
});
