import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { bufferedResponse, keepAliveFetch } from '../../src/http/keep-alive-fetch.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  remotePort: number;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function startServer(
  answer: (request: Seen, response: http.ServerResponse) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
        remotePort: request.socket.remotePort ?? 0,
      };
      seen.push(entry);
      answer(entry, response);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(async () => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen };
}

describe('keepAliveFetch', () => {
  it('sends method, headers and body, and answers like fetch: status, every header, the body', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(201, 'Created', [
        ['content-type', 'application/json'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ]);
      response.end(JSON.stringify({ ok: true }));
    });
    const response = await keepAliveFetch(`${server.url}/v1/chat?x=1`, {
      method: 'post',
      headers: new Headers({ 'content-type': 'application/json', 'idempotency-key': 'out_1' }),
      body: JSON.stringify({ hello: 'wörld' }),
    });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Created');
    expect(response.ok).toBe(true);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ ok: true });
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]).toMatchObject({ method: 'POST', url: '/v1/chat?x=1', body: '{"hello":"wörld"}' });
    expect(server.seen[0]?.headers['idempotency-key']).toBe('out_1');
    expect(server.seen[0]?.headers['content-length']).toBe(String(Buffer.byteLength('{"hello":"wörld"}')));
  });

  it('keeps the connection open between calls', async () => {
    const server = await startServer((_request, response) => response.end('fine'));
    for (let call = 0; call < 3; call += 1) {
      expect(await (await keepAliveFetch(server.url, { method: 'POST', body: 'x' })).text()).toBe('fine');
    }
    expect(new Set(server.seen.map((request) => request.remotePort)).size).toBe(1);
  });

  it('decompresses a compressed answer, and gives a body-less status no body', async () => {
    const server = await startServer((request, response) => {
      if (request.url === '/empty') {
        response.writeHead(204);
        response.end();
        return;
      }
      response.writeHead(500, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      response.end(gzipSync(JSON.stringify({ error: { message: 'overloaded' } })));
    });
    const failed = await keepAliveFetch(server.url, { headers: { 'accept-encoding': 'gzip' } });
    expect(failed.ok).toBe(false);
    expect(await failed.json()).toEqual({ error: { message: 'overloaded' } });
    const empty = await keepAliveFetch(`${server.url}/empty`, { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('follows a redirect as fetch does', async () => {
    const server = await startServer((request, response) => {
      if (request.url === '/old') {
        response.writeHead(308, { location: '/new' });
        response.end();
        return;
      }
      response.end(`arrived at ${request.url} with ${request.body}`);
    });
    const response = await keepAliveFetch(`${server.url}/old`, { method: 'POST', body: 'payload' });
    expect(await response.text()).toBe('arrived at /new with payload');
  });

  it('rejects with the signal’s reason when aborted, before or during the call', async () => {
    const server = await startServer(() => {
      // Never answers.
    });
    const aborted = new AbortController();
    aborted.abort(new Error('stopped early'));
    await expect(keepAliveFetch(server.url, { signal: aborted.signal })).rejects.toThrow('stopped early');
    await expect(
      keepAliveFetch(server.url, { method: 'POST', body: 'x', signal: AbortSignal.timeout(50) }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('fails like fetch when nothing listens: TypeError "fetch failed" with the system error as cause', async () => {
    const server = await startServer((_request, response) => response.end());
    const port = new URL(server.url).port;
    await closers.pop()?.();
    const failure = await keepAliveFetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x' }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe('fetch failed');
    expect(((failure as TypeError).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('sends the request again on a new connection when the pooled one was closed by the server', async () => {
    // A server that answers the first request on a connection and resets the connection on the second.
    let connections = 0;
    const server = net.createServer((socket) => {
      connections += 1;
      let requests = 0;
      socket.on('data', (data) => {
        if (!data.toString().includes('\r\n\r\n')) return;
        requests += 1;
        if (requests === 1) {
          socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok');
        } else {
          socket.resetAndDestroy();
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(async () => {
      server.close();
    });
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
    expect(await (await keepAliveFetch(url, { method: 'POST', body: 'first' })).text()).toBe('ok');
    expect(await (await keepAliveFetch(url, { method: 'POST', body: 'second' })).text()).toBe('ok');
    expect(connections).toBe(2);
  });

  it('hands what it does not send itself to the global fetch: a form body arrives as fetch sends it', async () => {
    const server = await startServer((request, response) => response.end(request.headers['content-type']));
    const response = await keepAliveFetch(server.url, { method: 'POST', body: new URLSearchParams({ To: '+1555' }) });
    expect(await response.text()).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(server.seen[0]?.body).toBe('To=%2B1555');
  });
});

describe('bufferedResponse (the body keepAliveFetch read, kept in memory)', () => {
  const answer = (text: string | Buffer) =>
    bufferedResponse(Buffer.isBuffer(text) ? text : Buffer.from(text), {
      status: 200,
      statusText: 'OK',
      headers: new Headers({ 'content-type': 'application/json' }),
    });

  it('reads the body once, like fetch: a second read rejects, and bodyUsed tells', async () => {
    const response = answer('{"a":1}');
    expect(response.bodyUsed).toBe(false);
    expect(await response.json()).toEqual({ a: 1 });
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
    await expect(response.arrayBuffer()).rejects.toThrow(TypeError);
    expect(() => response.clone()).toThrow(TypeError);
  });

  it('decodes UTF-8 as fetch does (a byte-order mark dropped) and hands out copies of the bytes', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('wörld')]);
    expect(await answer(bytes).text()).toBe('wörld');
    const kept = Buffer.from('abc');
    const copy = await answer(kept).bytes();
    copy[0] = 0x7a;
    const buffer = await answer(kept).arrayBuffer();
    new Uint8Array(buffer)[1] = 0x7a;
    expect(kept.toString()).toBe('abc');
    await expect(answer('{broken').json()).rejects.toThrow(SyntaxError);
  });

  it('gives a stream when one is asked for, and every later read goes through it', async () => {
    const response = answer('streamed');
    const reader = response.body?.getReader();
    expect(reader).toBeDefined();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toBe('streamed');
    reader?.releaseLock();
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it('clones before it is read, and keeps its status and headers', async () => {
    const response = answer('twice');
    const clone = response.clone();
    expect(await clone.text()).toBe('twice');
    expect(await response.text()).toBe('twice');
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.headers.get('content-type')).toBe('application/json');
    const blob = await answer('blob').blob();
    expect(await blob.text()).toBe('blob');
  });
});
