/**
 * `fetch` for our outbound calls (the model, the webhook gateway, Twilio, WhatsApp Cloud), on `node:http` and
 * `node:https` with keep-alive agents. Node's built-in fetch (undici) builds WHATWG requests, headers and streams for
 * every call: measured on this project's model request (a 50-message history, a short JSON answer), a call cost about
 * 300 µs of CPU through fetch and 100 µs through `http.request`, and a turn makes three such calls.
 *
 * It does what those calls need and hands everything else to the global fetch unchanged: a string or URL input with
 * an http(s) scheme, a string/bytes body (or none), any headers, an `AbortSignal`. Elsewhere it behaves as fetch:
 * - the whole body is read before the response resolves, decompressed when the server compressed it; `text()`,
 *   `json()`, `arrayBuffer()` and `bytes()` read it from memory (`bufferedResponse`), a stream is made only for
 *   `body`, `blob()`, `formData()` or `clone()`;
 * - a redirect is followed by the global fetch (it re-sends the request), unless `redirect: 'manual'`;
 * - a network failure rejects with `TypeError('fetch failed')` whose `cause` is the system error; an abort rejects
 *   with the signal's reason;
 * - a request on a pooled connection that the server had just closed (ECONNRESET, EPIPE before any answer) is sent
 *   again on a new connection, as Node's documentation advises for keep-alive agents.
 * With `NODE_USE_ENV_PROXY` set, every call goes to the global fetch, which honours the proxy variables.
 */
import http from 'node:http';
import https from 'node:https';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';

const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
} as const;

const decoders: Readonly<Record<string, (buffer: Buffer) => Promise<Buffer>>> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Errors of a pooled connection closed by the server just as it was reused: the request never reached it. */
const STALE_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE']);
const MAX_STALE_RETRIES = 2;

type FetchInput = Parameters<typeof globalThis.fetch>[0];
type FetchInit = NonNullable<Parameters<typeof globalThis.fetch>[1]>;

/** A string body is sent as it is: `http` writes it, UTF-8, in one piece with the request's head. */
function bodyBytes(body: FetchInit['body']): Buffer | string | undefined | false {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  return false;
}

/** The URL and body when this module can send the request itself, else undefined (the global fetch sends it). */
function ownRequest(input: FetchInput, init: FetchInit): { url: URL; body: Buffer | string | undefined } | undefined {
  if (process.env.NODE_USE_ENV_PROXY) return undefined;
  if (typeof input !== 'string' && !(input instanceof URL)) return undefined;
  const url = new URL(input);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const body = bodyBytes(init.body);
  return body === false ? undefined : { url, body };
}

function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

interface RawResponse {
  status: number;
  statusText: string;
  rawHeaders: string[];
  body: Buffer;
}

/**
 * A response whose body is already in memory. Reading it whole needs no stream, and for a model call those streams
 * were most of what the response cost (the SDK reads it with `text()`); its headers are the ones given, not a
 * copy. A stream is made only when asked for one (`body`, `blob()`, `formData()`, `clone()`), and from then on every
 * read goes through it, so "read once" holds across both ways of reading. A real `Response` whose body members are
 * its own properties (TypeScript's `Response` type declares them as properties, which a subclass cannot override).
 */
export function bufferedResponse(
  bytes: Buffer,
  init: { status: number; statusText: string; headers: Headers },
): Response {
  const response = new Response(null, { status: init.status, statusText: init.statusText });
  let read = false;
  let streamed: Response | undefined;
  const stream = (): Response => {
    streamed ??= new Response(read ? null : bytes, init);
    return streamed;
  };
  /** The body read once, as fetch allows: a second read rejects with a TypeError, as fetch's does. */
  function take<T>(readBody: () => T): Promise<T> {
    if (read) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    read = true;
    try {
      return Promise.resolve(readBody());
    } catch (error) {
      return Promise.reject(error);
    }
  }
  const copy = (): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);
  Object.defineProperties(response, {
    headers: { value: init.headers },
    body: { get: () => stream().body },
    bodyUsed: { get: () => read || (streamed?.bodyUsed ?? false) },
    text: { value: () => (streamed ? streamed.text() : take(() => utf8.decode(bytes))) },
    json: { value: () => (streamed ? streamed.json() : take(() => JSON.parse(utf8.decode(bytes)))) },
    arrayBuffer: { value: () => (streamed ? streamed.arrayBuffer() : take(() => copy().buffer)) },
    bytes: { value: () => (streamed ? streamed.bytes() : take(copy)) },
    blob: { value: () => stream().blob() },
    formData: { value: () => stream().formData() },
    clone: {
      value: () => {
        if (read) throw new TypeError('Response.clone: Body has already been consumed.');
        return stream().clone();
      },
    },
  });
  return response;
}

/** As fetch decodes a body: UTF-8, a byte-order mark dropped, malformed bytes replaced. */
const utf8 = new TextDecoder();

function requestHeaders(given: FetchInit['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  // The SDK passes a `Headers` already; anything else is normalised (and checked) by one.
  (given instanceof Headers ? given : new Headers(given)).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

function send(url: URL, init: FetchInit, body: Buffer | string | undefined, attempt: number): Promise<RawResponse> {
  const headers = requestHeaders(init.headers);
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const signal = init.signal ?? undefined;
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<RawResponse>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    let answered = false;
    const request = transport.request(url, {
      method: (init.method ?? 'GET').toUpperCase(),
      headers,
      agent: agents[url.protocol as keyof typeof agents],
    });
    const onAbort = () => request.destroy(abortReason(signal as AbortSignal) as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (outcome: () => void) => {
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (signal?.aborted) return finish(() => reject(abortReason(signal)));
      const stale = request.reusedSocket && !answered && STALE_CONNECTION_CODES.has(error.code ?? '');
      if (stale && attempt < MAX_STALE_RETRIES) {
        return finish(() => resolve(send(url, init, body, attempt + 1)));
      }
      finish(() => reject(fetchFailed(error)));
    });
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => finish(() => reject(signal?.aborted ? abortReason(signal) : fetchFailed(error))));
      response.on('end', () =>
        finish(() =>
          resolve({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? '',
            rawHeaders: response.rawHeaders,
            body: Buffer.concat(chunks),
          }),
        ),
      );
    });
    request.end(body);
  });
}

export const keepAliveFetch: typeof globalThis.fetch = async (input, init = {}) => {
  const own = ownRequest(input, init);
  if (!own) return globalThis.fetch(input, init);
  const raw = await send(own.url, init, own.body, 0);
  if (REDIRECT_STATUSES.has(raw.status) && init.redirect !== 'manual') return globalThis.fetch(input, init);
  const headers = new Headers();
  for (let index = 0; index + 1 < raw.rawHeaders.length; index += 2) {
    headers.append(raw.rawHeaders[index] as string, raw.rawHeaders[index + 1] as string);
  }
  let body = raw.body;
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  const decode = encoding ? decoders[encoding] : undefined;
  if (decode && body.byteLength > 0) {
    try {
      body = await decode(body);
    } catch (error) {
      throw fetchFailed(error);
    }
  }
  const answer = { status: raw.status, statusText: raw.statusText, headers };
  return NULL_BODY_STATUSES.has(raw.status) ? new Response(null, answer) : bufferedResponse(body, answer);
};
