/**
 * The `fetch` of our outbound calls (the model, the webhook gateway, Twilio, WhatsApp Cloud, Telegram), on undici's
 * `request` over one keep-alive `Agent` per client. Node's global fetch is undici too, but it builds a WHATWG request,
 * headers and body streams for every call, which was most of what a model call cost (docs/benchmarks.md); `request`
 * does not, and the answer's body is kept in memory (`bufferedResponse`).
 *
 * It behaves as fetch where our callers look:
 * - a redirect is followed only for GET and HEAD (a download). Any other method gets the 3xx as its answer, which the
 *   channels treat as a failed delivery: re-sending a message or a model request to another address is not ours to
 *   decide, and the origin must see it exactly once;
 * - a compressed answer is decompressed (here, not by undici's `decompress` interceptor: it warns it is experimental);
 * - a network failure rejects with `TypeError('fetch failed')` whose `cause` is undici's error; an abort rejects with
 *   the signal's reason;
 * - a request is never sent twice: a connection reset after the request went out is a failure, not a retry (the
 *   callers retry with their own idempotency: the SDK's retries, the outbox's).
 * With a proxy configured (`NODE_USE_ENV_PROXY`, read by config.ts), every call goes through undici's
 * `EnvHttpProxyAgent`.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import { Agent, type Dispatcher, EnvHttpProxyAgent, interceptors, request } from 'undici';
import { bufferedResponse } from './buffered-response.ts';

/** Where calls go through a proxy: config.ts's reading of the proxy variables (an empty string: none). */
export interface HttpProxySettings {
  readonly httpProxy: string;
  readonly httpsProxy: string;
  readonly noProxy: string;
}

export interface HttpClientOptions {
  /** How long an idle connection is kept for the next call; a shorter `Keep-Alive: timeout` of the server wins. */
  readonly keepAliveTimeoutMs?: number;
  /**
   * undici's own limits on waiting for an answer's headers and between its body's chunks (default 300 s; 0: none).
   * Callers bound their calls with an `AbortSignal`; these are a backstop (the bench's clock call waits for longer).
   */
  readonly headersTimeoutMs?: number;
  readonly bodyTimeoutMs?: number;
  readonly proxy?: HttpProxySettings;
}

export interface HttpClient {
  readonly fetch: typeof globalThis.fetch;
  /** Closes the pooled connections once the calls in flight are answered; later calls wait for the same close. */
  close(): Promise<void>;
}

type FetchInput = Parameters<typeof globalThis.fetch>[0];
type FetchInit = NonNullable<Parameters<typeof globalThis.fetch>[1]>;

const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 10_000;
/** Followed redirects of a GET or HEAD, as many as fetch follows. */
const MAX_REDIRECTIONS = 20;
/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const DECODERS: Readonly<Record<string, (buffer: Buffer) => Promise<Buffer>>> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const agentOptions = {
    keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    // One request at a time per connection: pipelining would let one slow answer hold up the calls queued behind it.
    pipelining: 1,
    ...(options.headersTimeoutMs === undefined ? {} : { headersTimeout: options.headersTimeoutMs }),
    ...(options.bodyTimeoutMs === undefined ? {} : { bodyTimeout: options.bodyTimeoutMs }),
  };
  const base: Dispatcher = options.proxy
    ? // A plain-http call is forwarded by the proxy (as Node's own proxy support does); an https one is tunnelled.
      new EnvHttpProxyAgent({ ...agentOptions, ...options.proxy, proxyTunnel: false })
    : new Agent(agentOptions);
  const following = base.compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS }));

  const fetch: typeof globalThis.fetch = async (input, init = {}) => {
    const call = await describeCall(input, init);
    const signal = call.signal;
    if (signal?.aborted) throw abortReason(signal);
    const follows = (call.method === 'GET' || call.method === 'HEAD') && init.redirect !== 'manual';
    try {
      const answer = await request(call.url, {
        dispatcher: follows ? following : base,
        method: call.method as Dispatcher.HttpMethod,
        headers: call.headers,
        body: call.body ?? null,
        ...(signal ? { signal } : {}),
      });
      const headers = responseHeaders(answer.headers);
      const body = await decoded(Buffer.from(await answer.body.arrayBuffer()), headers);
      const init = { status: answer.statusCode, statusText: answer.statusText, headers };
      return NULL_BODY_STATUSES.has(answer.statusCode) ? new Response(null, init) : bufferedResponse(body, init);
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      throw new TypeError('fetch failed', { cause: error });
    }
  };
  let closing: Promise<void> | undefined;
  // Idempotent: undici refuses a second close, and a shutdown may reach it twice.
  return { fetch, close: () => (closing ??= base.close()) };
}

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  signal: AbortSignal | undefined;
}

/** The call fetch's arguments describe; a `Request` input gives what `init` leaves out. */
async function describeCall(input: FetchInput, init: FetchInit): Promise<Call> {
  const given = input instanceof Request ? input : undefined;
  const url = given ? given.url : String(input);
  const protocol = URL.canParse(url) ? new URL(url).protocol : '';
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new TypeError('fetch failed', { cause: new Error(`not an http(s) URL: ${url}`) });
  }
  const headers: Record<string, string> = {};
  new Headers(init.headers ?? given?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  const body = await requestBody(init.body ?? (given?.body ? await given.arrayBuffer() : undefined), headers);
  return {
    url,
    method: (init.method ?? given?.method ?? 'GET').toUpperCase(),
    headers,
    body,
    signal: init.signal ?? given?.signal ?? undefined,
  };
}

/**
 * A string or bytes are sent as they are; any other body (a form, `FormData`, a `Blob`, a stream) as fetch would
 * encode it, with the content type fetch gives it unless the caller set one.
 */
async function requestBody(
  body: FetchInit['body'],
  headers: Record<string, string>,
): Promise<string | Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  const encoded = new Response(body);
  const contentType = encoded.headers.get('content-type');
  if (contentType && headers['content-type'] === undefined) headers['content-type'] = contentType;
  return Buffer.from(await encoded.arrayBuffer());
}

/** The body as the server meant it: decompressed when it says it compressed it (a failure is a fetch failure). */
async function decoded(body: Buffer, headers: Headers): Promise<Buffer> {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  const decode = encoding ? DECODERS[encoding] : undefined;
  return decode && body.byteLength > 0 ? decode(body) : body;
}

function responseHeaders(given: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
