import { describe, expect, it } from 'vitest';
import { bufferedResponse } from '../../src/http/buffered-response.ts';

describe('bufferedResponse (the body the HTTP client read, kept in memory)', () => {
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
