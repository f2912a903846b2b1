/**
 * A fetch `Response` whose body the HTTP client has already read into memory (see `http-client.ts`): the `openai`
 * SDK and the channels read every answer whole, and the WHATWG body stream a `Response` builds for that was most of
 * what an answer cost on the hot path (docs/benchmarks.md).
 */
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
