/**
 * HTTP as a test client sees it, for the web routes: a server-sent events stream read as it arrives (what came so
 * far, and whether the server ended it), and plain requests sent from a chosen local address (any 127.x.y.z reaches
 * a server listening on 127.0.0.1 on Linux), so per-address behaviour can be tested against one server.
 */
import { request as httpRequest } from 'node:http';

export interface EventStreamClient {
  status: number;
  /** Everything received so far. */
  received(): string;
  /** True once the server ended the response (not when `close` aborted it). */
  ended(): boolean;
  /** Aborts the request (clean-up). */
  close(): void;
}

export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStreamClient> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  let text = '';
  let ended = false;
  const reader = response.body?.getReader();
  if (reader) {
    const decoder = new TextDecoder();
    void (async () => {
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          text += decoder.decode(chunk.value, { stream: true });
        }
        ended = true;
      } catch {
        // Aborted by close(), or the connection was cut: neither is the server ending the stream.
      }
    })();
  }
  return { status: response.status, received: () => text, ended: () => ended, close: () => controller.abort() };
}

export interface PlainResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request to `url` from the local address `from` (e.g. `127.0.0.2`). */
export function requestFrom(
  from: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers ?? {}, localAddress: from },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}
