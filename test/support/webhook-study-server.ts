/**
 * The real `promptpipe serve` process as the safety and scheduling end-to-end tests run it: SQLite in a temporary
 * state directory, the webhook channel to a local capture gateway, the scripted OpenAI-compatible model, the manual
 * clock at 2026-03-02T14:00Z (09:00 in New York) and an API token; with the calls those tests make.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HttpReceiver, startHttpReceiver } from './http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from './scripted-openai-server.ts';
import { killServer, type ServerProcess, startServer, stopServer } from './server-process.ts';

export interface WebhookStudyServer {
  server: ServerProcess;
  /** The server's PROMPTPIPE_STATE_DIR (for CLI commands beside it). */
  stateDir: string;
  model: ScriptedOpenAiServer;
  gateway: HttpReceiver;
  /** An API request with the token (a JSON body when one is given). */
  call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response>;
  /** What the gateway received, in order: each message's text, or a poll's question. */
  texts(): string[];
  /** SIGKILLs the server (a crash) and starts it again on the same state directory and settings. */
  killAndRestart(): Promise<void>;
  /** `POST /admin/clock {set_to}`; throws unless it answered 200. */
  clockTo(iso: string): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookStudyServer(options: {
  apiToken: string;
  respond: Parameters<typeof startScriptedOpenAiServer>[0]['respond'];
  /** The test's own settings (QUIET_HOURS, TAKEOVER_IDLE_AFTER, …). */
  env?: Record<string, string>;
}): Promise<WebhookStudyServer> {
  const stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-study-'));
  const gateway = await startHttpReceiver();
  const model = await startScriptedOpenAiServer({ respond: options.respond });
  const environment = {
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
    LLM_MAX_RETRIES: '0',
    // 09:00 in New York (UTC-5 until 8 March 2026).
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00.000Z',
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    PROMPTPIPE_API_TOKEN: options.apiToken,
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  let server = await startServer(environment);
  const call: WebhookStudyServer['call'] = (method, path, body) =>
    fetch(`${server.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.apiToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return {
    get server() {
      return server;
    },
    stateDir,
    model,
    gateway,
    call,
    texts: () =>
      gateway.requests.map((request) => {
        const message = JSON.parse(request.body) as { text?: string; question?: string };
        return message.text ?? message.question ?? '';
      }),
    async killAndRestart() {
      await killServer(server);
      server = await startServer(environment);
    },
    async clockTo(iso) {
      const response = await call('POST', '/admin/clock', { set_to: iso });
      if (response.status !== 200)
        throw new Error(`POST /admin/clock answered ${response.status}: ${await response.text()}`);
    },
    async close() {
      try {
        await stopServer(server);
      } finally {
        await model.close();
        await gateway.close();
        await rm(stateDir, { recursive: true, force: true });
      }
    },
  };
}
