/**
 * The real `promptpipe serve` process as the safety and scheduling end-to-end tests run it: SQLite in a temporary
 * state directory, the webhook channel to a local capture gateway, the scripted OpenAI-compatible model, the manual
 * clock at 2026-03-02T14:00Z (09:00 in New York) and an API token; with the calls those tests make.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HttpReceiver, startHttpReceiver } from './http-receiver.ts';
import {
  type ScriptedOpenAiServer,
  type ScriptedResponder,
  startScriptedOpenAiServer,
} from './scripted-openai-server.ts';
import { killServer, type ServerProcess, startServer, stopServer, waitFor } from './server-process.ts';

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
  /** Daily prompts sent: each is followed by its Done poll (the prompt itself may be the fallback text). */
  prompts(): number;
  /** Waits up to 20 seconds for `check`, showing the server's output if it fails. */
  wait<T>(what: string, check: () => T | Promise<T>): Promise<NonNullable<T>>;
  /**
   * Enrolls Ada and has her ask {@link schedulingCoach} for her daily prompt: waits for the greeting, sends the
   * script's `ask` (message id m-1) and waits for its `confirm`. Answers her participant id.
   */
  enrollScheduled(participant: { phone: string; timezone: string }, script: SchedulingScript): Promise<string>;
  /** SIGKILLs the server (a crash) and starts it again on the same state directory and settings. */
  killAndRestart(): Promise<void>;
  /** `POST /admin/clock {set_to}`; throws unless it answered 200. */
  clockTo(iso: string): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookStudyServer(options: {
  apiToken: string;
  respond: ScriptedResponder;
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
  const texts = () =>
    gateway.requests.map((request) => {
      const message = JSON.parse(request.body) as { text?: string; question?: string };
      return message.text ?? message.question ?? '';
    });
  const wait: WebhookStudyServer['wait'] = (what, check) => waitFor(what, check, 20_000, [server]);
  return {
    get server() {
      return server;
    },
    stateDir,
    model,
    gateway,
    call,
    texts,
    prompts: () => texts().filter((text) => text === 'Did you do it?').length,
    wait,
    async enrollScheduled({ phone, timezone }, { ask, confirm }) {
      const enrolled = await call('POST', '/conversation/participants', { phone_number: phone, name: 'Ada', timezone });
      const participantId = ((await enrolled.json()) as { result: { id: string } }).result.id;
      await wait('the greeting', () => texts().includes('Hello!'));
      await call('POST', '/channels/webhook/messages', { from: phone, text: ask, id: 'm-1' });
      await wait('the schedule', () => texts().includes(confirm));
      return participantId;
    },
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

/** How a scheduling test's participant asks for her daily prompt, and how the coach confirms it. */
export interface SchedulingScript {
  /** What the participant writes. */
  ask: string;
  /** The fixed daily time the coach schedules (HH:MM, the participant's zone). */
  fixedTime: string;
  /** What the coach says once the scheduler tool has answered. */
  confirm: string;
}

/**
 * The scripted coach of the scheduling tests: greets with `Hello!`; when the participant writes the script's `ask`,
 * calls the scheduler for a fixed daily prompt, and confirms once the tool has answered; otherwise echoes
 * `Coach heard: <text>`. With `dailyPrompt`, the daily prompt generator writes that prompt.
 */
export function schedulingCoach(options: SchedulingScript & { dailyPrompt?: string }): ScriptedResponder {
  return (request) => {
    const said = request.lastMessage?.content ?? '';
    if (
      options.dailyPrompt !== undefined &&
      request.body.messages[0]?.content?.startsWith('You write one short daily habit prompt')
    ) {
      return { content: options.dailyPrompt };
    }
    if (request.lastMessage?.role === 'tool') return { content: options.confirm };
    if (said === options.ask) {
      return {
        toolCalls: [
          { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: options.fixedTime } },
        ],
      };
    }
    return { content: said.includes('expecting a greeting') ? 'Hello!' : `Coach heard: ${said}` };
  };
}
