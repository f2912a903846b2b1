/**
 * The wired application in process for the original API's contract tests: SQLite in memory, the manual clock at
 * Monday 2 March 2026 09:00 in Toronto, the webhook channel delivering to a local gateway, a scripted model and an
 * API token (the original's routes sit behind it like every other).
 */
import type { Application } from '../../src/main.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

export const TOKEN = 'original-api-token';
/** Monday 2026-03-02 09:00 in Toronto (EST). */
export const START = '2026-03-02T14:00:00.000Z';

export interface OriginalApp {
  app: Application;
  gateway: HttpReceiver;
  model: ScriptedOpenAiServer;
  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, token?: string | null): Promise<Answer>;
  /** The JSON bodies the gateway received, in order. */
  delivered(): Record<string, unknown>[];
  waitForDeliveries(count: number): Promise<Record<string, unknown>[]>;
  advanceTo(iso: string): Promise<void>;
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export async function startOriginalApp(environment: Record<string, string> = {}): Promise<OriginalApp> {
  const gateway = await startHttpReceiver();
  const model = await startScriptedOpenAiServer({
    respond: (request) => ({ content: `model answer to: ${request.lastMessage?.content ?? ''}` }),
  });
  const app = await startTestApplication({
    PROMPTPIPE_API_TOKEN: TOKEN,
    PROMPTPIPE_CLOCK_START: START,
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    OPENAI_BASE_URL: model.baseUrl,
    // A failing model fails at once: the 500 of a genai prompt is not retried three times.
    LLM_MAX_RETRIES: '0',
    ...environment,
  });
  const delivered = () => gateway.requests.map((request) => JSON.parse(request.body) as Record<string, unknown>);
  return {
    app,
    gateway,
    model,
    async call(method, url, body, token = TOKEN) {
      const response = await app.server.inject({
        method,
        url,
        headers: {
          ...(token === null ? {} : { authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      return { status: response.statusCode, body: response.body ? (response.json() as Record<string, unknown>) : {} };
    },
    delivered,
    waitForDeliveries: (count) =>
      waitUntil(`${count} deliveries at the gateway`, () => (delivered().length >= count ? delivered() : undefined)),
    async advanceTo(iso) {
      const answer = await app.server.inject({
        method: 'POST',
        url: '/admin/clock',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ set_to: iso }),
      });
      if (answer.statusCode !== 200) throw new Error(`clock move failed: ${answer.body}`);
    },
    async close() {
      await app.stop();
      await model.close();
      await gateway.close();
    },
  };
}
