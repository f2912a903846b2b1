/**
 * A loopback proxy in front of the coach's OpenAI-compatible endpoint that keeps every chat request and answer of a
 * run. The application builds its own model client from the configuration, so this is how the evaluation sees exactly
 * what the context builder sent (to check it) and which tools each module offered — with any provider, unchanged.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One chat-completions exchange as sent and received (the raw OpenAI shapes, read loosely). */
export interface RecordedExchange {
  request: {
    messages?: { role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
    tools?: { function?: { name?: string } }[];
  };
  response: { choices?: { message?: { content?: string | null; tool_calls?: { function?: { name?: string } }[] } }[] };
  status: number;
}

export interface RecordingProxy {
  /** The base URL to give the application (`OPENAI_BASE_URL`). */
  readonly baseUrl: string;
  readonly exchanges: RecordedExchange[];
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Forwards `<baseUrl>/…` to `target/…` (headers and bodies as they are). */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const exchanges: RecordedExchange[] = [];
  const upstream = target.replace(/\/+$/, '');
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name))
          headers[name] = value;
      }
      const path = (request.url ?? '/').replace(/^\/v1-proxy/, '');
      try {
        const answer = await fetch(`${upstream}${path}`, {
          method: request.method ?? 'GET',
          headers,
          ...(body.length > 0 ? { body } : {}),
        });
        const text = await answer.text();
        if (path.endsWith('/chat/completions')) {
          exchanges.push({
            request: parseJson(body.toString('utf8')) as RecordedExchange['request'],
            response: parseJson(text) as RecordedExchange['response'],
            status: answer.status,
          });
        }
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        response.end(text);
      } catch (error) {
        response.writeHead(502, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: `evaluation proxy: ${(error as Error).message}` } }));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1-proxy`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
