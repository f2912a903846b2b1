import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/http/http-client.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  remotePort: number;
}

const closers: (() => Promise<void>)[] = [];
const client = createHttpClient();
const keepAliveFetch = client.fetch;
afterAll(() => client.close());
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

describe('createHttpClient().fetch', () => {
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

  it('keeps connections open between calls', async () => {
    // undici hands a finished connection back to its pool a moment after the answer is read, so a call made at once
    // may open a second one; what keep-alive promises is that calls reuse connections rather than one each.
    const server = await startServer((_request, response) => response.end('fine'));
    const calls = 6;
    for (let call = 0; call < calls; call += 1) {
      expect(await (await keepAliveFetch(server.url, { method: 'POST', body: 'x' })).text()).toBe('fine');
    }
    expect(new Set(server.seen.map((request) => request.remotePort)).size).toBeLessThan(calls);
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

  it('answers a POST with the 3xx it got: the origin receives the POST exactly once, and nothing is sent on', async () => {
    const server = await startServer((request, response) => {
      if (request.url === '/old') {
        response.writeHead(307, { location: '/new' });
        response.end();
        return;
      }
      response.end(`arrived at ${request.url} with ${request.body}`);
    });
    const response = await keepAliveFetch(`${server.url}/old`, { method: 'POST', body: 'payload' });
    expect(response.status).toBe(307);
    expect(response.ok).toBe(false);
    expect(response.headers.get('location')).toBe('/new');
    expect(server.seen.map((request) => `${request.method} ${request.url} ${request.body}`)).toEqual([
      'POST /old payload',
    ]);
  });

  it('follows a redirect of a GET, as fetch does', async () => {
    const server = await startServer((request, response) => {
      if (request.url === '/old') {
        response.writeHead(302, { location: '/new' });
        response.end();
        return;
      }
      response.end(`arrived at ${request.url}`);
    });
    const response = await keepAliveFetch(`${server.url}/old`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('arrived at /new');
    expect(server.seen.map((request) => request.url)).toEqual(['/old', '/new']);
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

  it('uses a new connection when the server closed the pooled one, and never sends a request twice', async () => {
    // A server that answers the first request on a connection and then closes it (as an idle timeout does), and
    // resets the connection on a request that arrives anyway: that request reached it, so it must not come again.
    let connections = 0;
    const received: string[] = [];
    const server = net.createServer((socket) => {
      connections += 1;
      socket.on('data', (data) => {
        const text = data.toString();
        if (!text.includes('\r\n\r\n')) return;
        received.push(text.slice(text.indexOf('\r\n\r\n') + 4));
        if (text.endsWith('reset')) {
          socket.resetAndDestroy();
          return;
        }
        socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok');
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
    const failure = await keepAliveFetch(url, { method: 'POST', body: 'reset' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(received).toEqual(['first', 'second', 'reset']);
  });

  it('sends a form body as fetch encodes it', async () => {
    const server = await startServer((request, response) => response.end(request.headers['content-type']));
    const response = await keepAliveFetch(server.url, { method: 'POST', body: new URLSearchParams({ To: '+1555' }) });
    expect(await response.text()).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(server.seen[0]?.body).toBe('To=%2B1555');
  });

  it('sends every call through the configured proxy, except to the hosts of noProxy', async () => {
    // A plain HTTP proxy receives the absolute URL in the request line; this one answers for the target itself.
    const proxy = await startServer((request, response) => response.end(`proxied ${request.method} ${request.url}`));
    const direct = await startServer((_request, response) => response.end('direct'));
    const proxied = createHttpClient({ proxy: { httpProxy: proxy.url, httpsProxy: '', noProxy: '127.0.0.1' } });
    try {
      const answer = await proxied.fetch('http://coach.example.invalid/v1/chat', { method: 'POST', body: 'x' });
      expect(await answer.text()).toBe('proxied POST http://coach.example.invalid/v1/chat');
      expect(await (await proxied.fetch(direct.url)).text()).toBe('direct');
      expect(proxy.seen).toHaveLength(1);
    } finally {
      await proxied.close();
    }
  });

  it('closes once, however often it is asked to, and then refuses new calls', async () => {
    const server = await startServer((_request, response) => response.end('fine'));
    const closing = createHttpClient();
    expect(await (await closing.fetch(server.url)).text()).toBe('fine');
    await Promise.all([closing.close(), closing.close()]);
    await closing.close();
    await expect(closing.fetch(server.url)).rejects.toThrow('fetch failed');
  });
});
