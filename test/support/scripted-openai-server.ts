/**
 * A tiny OpenAI-compatible chat-completions server on `node:http` for end-to-end tests: point `OPENAI_BASE_URL` at
 * `server.baseUrl` and every `POST …/chat/completions` is answered by a function of the request (so a test scripts
 * the model by what it was asked: "if the last message is the greeting hint, greet; if the profile tool result came
 * back, schedule…"). Every request is recorded. `GET …/models` answers too, for clients that probe it.
 *
 * Responses are non-streaming `chat.completion` objects; a reply may instead be an HTTP error, to exercise retries
 * and the "assistant unavailable" fallback.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One message of an OpenAI chat request, loosely typed (tests read what they need). */
export interface OpenAiRequestMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ScriptedChatRequest {
  /** The parsed JSON body. */
  body: {
    model: string;
    messages: OpenAiRequestMessage[];
    tools?: { type: 'function'; function: { name: string; description?: string; parameters?: unknown } }[];
    temperature?: number;
    [field: string]: unknown;
  };
  headers: IncomingHttpHeaders;
  /** Convenience: the text of the last message, the names of the offered tools. */
  lastMessage: OpenAiRequestMessage | undefined;
  toolNames: string[];
}

export interface ScriptedToolCall {
  /** Defaults to `call_<n>`. */
  id?: string;
  name: string;
  /** An object is JSON-encoded; a string is sent as is (to test malformed arguments). */
  arguments?: string | Record<string, unknown>;
}

export type ScriptedReply =
  | {
      content?: string;
      toolCalls?: ScriptedToolCall[];
      usage?: { prompt_tokens: number; completion_tokens: number };
      /** Answer only after this delay (timeouts, concurrency). */
      delayMs?: number;
    }
  | { status: number; error: string }
  /** A body sent as is with status 200 (a provider misbehaving: no `choices`, a wrong shape). */
  | { rawBody: unknown };

export type ScriptedResponder = (request: ScriptedChatRequest, index: number) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedOpenAiServer {
  /** `http://127.0.0.1:<port>/v1`: the value for `OPENAI_BASE_URL`. */
  readonly baseUrl: string;
  /** Every chat request received, in order. */
  readonly requests: ScriptedChatRequest[];
  /** Replaceable between phases of a test. */
  respond: ScriptedResponder;
  close(): Promise<void>;
}

export const SCRIPTED_MODEL = 'scripted-model';

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startScriptedOpenAiServer(options: {
  respond: ScriptedResponder;
  port?: number;
  /**
   * A server without native tool calling (llama.cpp without `--jinja`, vLLM without a tool parser): a request with
   * a `tools` field or a `tool`-role message is rejected with 400, as such servers do.
   */
  noToolSupport?: boolean;
}): Promise<ScriptedOpenAiServer> {
  const requests: ScriptedChatRequest[] = [];
  let toolCallCounter = 0;
  let completionCounter = 0;

  function completion(
    reply: Exclude<ScriptedReply, { status: number } | { rawBody: unknown }>,
    model: string,
  ): Record<string, unknown> {
    completionCounter += 1;
    const toolCalls = (reply.toolCalls ?? []).map((call) => {
      toolCallCounter += 1;
      return {
        id: call.id ?? `call_${toolCallCounter}`,
        type: 'function',
        function: {
          name: call.name,
          arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
        },
      };
    });
    const usage = reply.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
    return {
      id: `chatcmpl-${completionCounter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: reply.content ?? (toolCalls.length > 0 ? null : ''),
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    };
  }

  const server = createServer((request, response) => {
    const send = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    void (async () => {
      const path = (request.url ?? '').split('?')[0] ?? '';
      if (request.method === 'GET' && path.endsWith('/models')) {
        send(200, { object: 'list', data: [{ id: SCRIPTED_MODEL, object: 'model', owned_by: 'test' }] });
        return;
      }
      if (request.method !== 'POST' || !path.endsWith('/chat/completions')) {
        send(404, { error: { message: `no route ${request.method} ${path}`, type: 'invalid_request_error' } });
        return;
      }
      let body: ScriptedChatRequest['body'];
      try {
        body = JSON.parse(await readBody(request)) as ScriptedChatRequest['body'];
      } catch {
        send(400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
        return;
      }
      if (
        options.noToolSupport &&
        (body.tools !== undefined ||
          (body.messages ?? []).some((message) => message.role === 'tool' || message.tool_calls))
      ) {
        requests.push({ body, headers: request.headers, lastMessage: body.messages?.at(-1), toolNames: [] });
        send(400, { error: { message: 'this server does not support tools', type: 'invalid_request_error' } });
        return;
      }
      const scripted: ScriptedChatRequest = {
        body,
        headers: request.headers,
        lastMessage: body.messages?.at(-1),
        toolNames: (body.tools ?? []).map((tool) => tool.function.name),
      };
      requests.push(scripted);
      try {
        const reply = await scriptedServer.respond(scripted, requests.length - 1);
        if ('status' in reply) {
          send(reply.status, { error: { message: reply.error, type: 'scriptedServererror' } });
          return;
        }
        if ('rawBody' in reply) {
          send(200, reply.rawBody);
          return;
        }
        if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
        send(200, completion(reply, body.model || SCRIPTED_MODEL));
      } catch (error) {
        // A responder bug must show up in the test, not hang it: answer 500 with the message.
        send(500, {
          error: { message: `scripted responder threw: ${(error as Error).message}`, type: 'scriptedServererror' },
        });
      }
    })();
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const scriptedServer: ScriptedOpenAiServer = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    respond: options.respond,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  return scriptedServer;
}
