/**
 * An OpenAI-compatible chat-completions server that answers at once, for the end-to-end benchmarks: the numbers are
 * PromptPipe's own cost, not a model's. Like the in-process engine benchmark's fake, a turn is one tool call and one
 * reply: a request that offers tools and ends with a user message gets a `save_user_profile` call; a request that
 * ends with the tool's result, or offers no tools (the greeting hint, the habit-prompt generator), gets text.
 * Nothing is recorded, so memory stays flat however long it runs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface InstantModelServer {
  /** The value for `OPENAI_BASE_URL`. */
  readonly baseUrl: string;
  /** Chat completions answered so far. */
  readonly requestCount: number;
  close(): Promise<void>;
}

interface ChatBody {
  model?: string;
  messages?: { role?: string }[];
  tools?: unknown[];
}

function completion(body: ChatBody, index: number): Record<string, unknown> {
  const last = body.messages?.at(-1)?.role;
  const wantsTool = Array.isArray(body.tools) && body.tools.length > 0 && last === 'user';
  const message = wantsTool
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: `call_${index}`,
            type: 'function',
            function: {
              name: 'save_user_profile',
              arguments: JSON.stringify({ additional_info: `Prefers short walks (${index})` }),
            },
          },
        ],
      }
    : { role: 'assistant', content: 'Thanks, I saved that. What time of day would suit your habit prompt best?' };
  return {
    id: `chatcmpl-${index}`,
    object: 'chat.completion',
    created: 0,
    model: body.model ?? 'instant',
    choices: [{ index: 0, message, finish_reason: wantsTool ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

export async function startInstantModelServer(): Promise<InstantModelServer> {
  let requestCount = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      requestCount += 1;
      let body: ChatBody = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatBody;
      } catch {
        // An unparsable request still gets an answer: the benchmark measures PromptPipe, not this server.
      }
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(completion(body, requestCount)));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requestCount() {
      return requestCount;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
