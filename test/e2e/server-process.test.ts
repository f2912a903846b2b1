/**
 * End to end, out of process: the real `promptpipe serve` (spawned with `node src/cli/main.ts serve`) with the
 * webhook channel, talking to a scripted OpenAI-compatible model server and a local webhook gateway, on the manual
 * clock. Nothing of the application is imported: everything goes over HTTP, signed like a real gateway would.
 *
 * enroll → greeting delivered → intake turns (profile, first prompt, daily schedule, FEEDBACK) → clock to the prompt
 * instant → habit prompt and Done poll delivered → "Done" poll answer → success_count 1 → a feedback turn
 * → SIGTERM → exit code 0.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpReceiver, type ReceivedRequest, startHttpReceiver } from '../support/http-receiver.ts';
import {
  type OpenAiRequestMessage,
  type ScriptedChatRequest,
  type ScriptedOpenAiServer,
  type ScriptedReply,
  startScriptedOpenAiServer,
} from '../support/scripted-openai-server.ts';
import {
  describeOutput,
  type ServerExit,
  type ServerProcess,
  startServer,
  stopServer as stopServerProcess,
  waitFor as waitForCondition,
} from '../support/server-process.ts';

const API_TOKEN = 'e2e-api-token';
const WEBHOOK_SECRET = 'e2e-webhook-secret';
/** Monday 2026-03-02, 09:00 in Toronto (EST, UTC-5: daylight saving time starts on March 8). */
const CLOCK_START = '2026-03-02T14:00:00.000Z';
/** The next day's 09:00 target, minus the default 10 minutes of SCHEDULER_PREP_TIME_MINUTES: 08:50 local. */
const PROMPT_INSTANT = '2026-03-03T13:50:00.000Z';
const PHONE_AS_TYPED = '+1 (555) 123-0002';
const PHONE = '+15551230002';

// ---------------------------------------------------------------------------------------------------------------
// The scripted coach: a reply is a function of the request (which module asks, what the participant said, which
// tool results came back in this turn). Anything it does not expect is recorded and answered with a marker text, so
// a product change shows up as a clear assertion failure rather than a hang.
// ---------------------------------------------------------------------------------------------------------------

const SAID = {
  habit: 'I want to walk more, it gives me energy',
  timing: 'Around 9, right after breakfast',
  forged: 'this message has a forged signature',
} as const;
const COACH = {
  greeting: 'Hi Ada! Which habit would you like to build?',
  askTiming: 'Walking for energy, love it. When in your day could a short walk fit?',
  firstPrompt: 'After breakfast, step outside and walk to the end of the street and back.',
  dailyPrompt: 'After breakfast today, put your shoes on and walk for five minutes: energy for the morning.',
  feedback: 'Wonderful, well done! How did the walk feel?',
  allSet: (prompt: string) => `Here is your first one: ${prompt} From tomorrow it comes every morning before 9.`,
} as const;
// The contract's tools, and the safety net's flag_for_staff (docs/safety.md).
const INTAKE_TOOLS = ['flag_for_staff', 'generate_habit_prompt', 'save_user_profile', 'scheduler', 'transition_state'];
const FEEDBACK_TOOLS = ['flag_for_staff', 'save_user_profile', 'scheduler', 'transition_state'];

/** The tool calls of the second intake turn, one per model round, in this order. */
const COMPLETE_INTAKE: { name: string; arguments: Record<string, unknown> }[] = [
  { name: 'save_user_profile', arguments: { preferred_time: '09:00', prompt_anchor: 'after breakfast' } },
  { name: 'generate_habit_prompt', arguments: { delivery_mode: 'immediate' } },
  { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '09:00' } },
  { name: 'transition_state', arguments: { target_state: 'FEEDBACK', reason: 'intake complete' } },
];

type Module = 'intake' | 'feedback' | 'prompt-generator' | 'unknown';

function moduleOf(request: ScriptedChatRequest): Module {
  const system = request.body.messages[0]?.content ?? '';
  if (system.startsWith('You write one short daily habit prompt')) return 'prompt-generator';
  if (system.includes('(INTAKE)')) return 'intake';
  if (system.includes('(FEEDBACK)')) return 'feedback';
  return 'unknown';
}

/** The last participant (or synthetic) message and the tool results that followed it in this turn. */
function currentTurn(messages: readonly OpenAiRequestMessage[]): { said: string; results: Record<string, unknown>[] } {
  const userIndex = messages.findLastIndex((message) => message.role === 'user');
  const results = messages
    .slice(userIndex + 1)
    .filter((message) => message.role === 'tool')
    .map((message) => {
      try {
        return JSON.parse(message.content ?? '') as Record<string, unknown>;
      } catch {
        return { status: 'unparseable', content: message.content };
      }
    });
  return { said: messages[userIndex]?.content ?? '', results };
}

function createCoach(unexpected: string[]) {
  const surprise = (what: string): ScriptedReply => {
    unexpected.push(what);
    return { content: `SCRIPT SURPRISE: ${what}` };
  };
  return (request: ScriptedChatRequest): ScriptedReply => {
    const module = moduleOf(request);
    const { said, results } = currentTurn(request.body.messages);
    const failed = results.find((result) => result.status !== 'success');
    if (failed) return surprise(`${module}: a tool did not succeed: ${JSON.stringify(failed)}`);

    if (module === 'prompt-generator') {
      if (said.includes('first habit prompt')) return { content: COACH.firstPrompt };
      if (said.includes('daily habit prompt')) return { content: COACH.dailyPrompt };
      return surprise(`prompt-generator asked: ${said}`);
    }
    if (module === 'intake') {
      if (said.includes('expecting a greeting')) return { content: COACH.greeting };
      if (said === SAID.habit) {
        if (results.length === 0) {
          return {
            toolCalls: [
              { name: 'save_user_profile', arguments: { habit_domain: 'walking', motivational_frame: 'more energy' } },
            ],
          };
        }
        return { content: COACH.askTiming };
      }
      if (said === SAID.timing) {
        const next = COMPLETE_INTAKE[results.length];
        if (next) return { toolCalls: [next] };
        const prompt = results[1]?.prompt;
        return typeof prompt === 'string'
          ? { content: COACH.allSet(prompt) }
          : surprise(`generate_habit_prompt returned no prompt: ${JSON.stringify(results[1])}`);
      }
      return surprise(`intake heard: ${said}`);
    }
    if (module === 'feedback') {
      if (said === 'Q: Did you do it? A: Done') return { content: COACH.feedback };
      return surprise(`feedback heard: ${said}`);
    }
    return surprise(`a request from an unknown module: ${request.body.messages[0]?.content?.slice(0, 120)}`);
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The server process
// ---------------------------------------------------------------------------------------------------------------

/** Polls `check` until it returns a truthy value (returned), failing early when the server process died. */
function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 15_000): Promise<NonNullable<T>> {
  return waitForCondition(what, check, timeoutMs, [serverProcess]);
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP helpers: the organiser's API (bearer token) and the gateway's webhook (signed, no token)
// ---------------------------------------------------------------------------------------------------------------

/** Signs `<timestamp>.<body>`, as a gateway does (docs/api.md, Signatures). */
const sign = (body: string, timestamp: string): string =>
  `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(`${timestamp}.${body}`).digest('hex')}`;
const nowInUnixSeconds = (): string => String(Math.floor(Date.now() / 1000));

function hasValidSignature(request: ReceivedRequest): boolean {
  const timestamp = request.headers['x-promptpipe-timestamp'];
  if (typeof timestamp !== 'string') return false;
  const expected = Buffer.from(sign(request.body, timestamp));
  const header = request.headers['x-promptpipe-signature'];
  const received = Buffer.from(typeof header === 'string' ? header : '');
  return expected.length === received.length && timingSafeEqual(expected, received);
}

// biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
type Json = any;

async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${serverProcess?.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

async function inbound(payload: Record<string, unknown>, signature?: string): Promise<{ status: number; json: Json }> {
  const body = JSON.stringify(payload);
  const timestamp = nowInUnixSeconds();
  const response = await fetch(`${serverProcess?.baseUrl}/channels/webhook/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-promptpipe-timestamp': timestamp,
      'x-promptpipe-signature': signature ?? sign(body, timestamp),
    },
    body,
  });
  return { status: response.status, json: await response.json() };
}

interface OutboundPayload {
  id: string;
  participant_id: string;
  to: string;
  kind: 'text' | 'poll';
  text: string;
  poll?: { id: string; question: string; options: string[] };
}

// ---------------------------------------------------------------------------------------------------------------

let serverProcess: ServerProcess | undefined;
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let stateDir: string;
const unexpected: string[] = [];

const delivered = (): OutboundPayload[] => gateway.requests.map((request) => JSON.parse(request.body));
const deliveredText = (text: string) => () => delivered().find((message) => message.text === text);
const modelRequests = (module: Module) => model.requests.filter((request) => moduleOf(request) === module);

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-e2e-'));
  model = await startScriptedOpenAiServer({ respond: createCoach(unexpected) });
  gateway = await startHttpReceiver();
  serverProcess = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: CLOCK_START,
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    PROMPTPIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    LOG_LEVEL: 'warn',
  });
}, 60_000);

type Exit = ServerExit;
let shutdown: Promise<Exit | undefined> | undefined;

/** Graceful shutdown: the first SIGTERM finishes the work in flight, closes the database and exits 0. Once. */
function stopServer(): Promise<Exit | undefined> {
  shutdown ??= (async () => (serverProcess ? stopServerProcess(serverProcess) : undefined))();
  return shutdown;
}

const exitedCleanly = (exit: Exit | undefined): boolean => exit === undefined || (exit.code === 0 && !exit.signal);

// The shutdown is also its own test below (the summary line counts tests, not hooks); this is the safety net.
afterAll(async () => {
  try {
    const exit = await stopServer();
    if (!exitedCleanly(exit)) {
      throw new Error(
        `promptpipe serve did not exit 0 after SIGTERM: ${JSON.stringify(exit)}\n${describeOutput(serverProcess)}`,
      );
    }
  } finally {
    await model?.close();
    await gateway?.close();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  }
}, 30_000);

describe('promptpipe serve, as a separate process', () => {
  it('runs a study day from enrollment to the first feedback turn over HTTP', { timeout: 60_000 }, async ({
    onTestFailed,
  }) => {
    onTestFailed(() => {
      console.error(describeOutput(serverProcess));
      console.error(`model requests: ${model.requests.length}; unexpected: ${JSON.stringify(unexpected)}`);
      console.error(
        `delivered:\n${delivered()
          .map((message) => `  ${message.kind} ${JSON.stringify(message.text)}`)
          .join('\n')}`,
      );
    });

    // The token guards the API but not /health (used above) nor the signed webhook.
    const anonymous = await fetch(`${serverProcess?.baseUrl}/conversation/participants`);
    expect(anonymous.status).toBe(401);
    expect((await api('GET', '/admin/clock')).json.result).toMatchObject({ now: CLOCK_START, mode: 'manual' });

    // Enroll: 201, and the greeting reaches the gateway.
    const enrolled = await api('POST', '/conversation/participants', {
      phone_number: PHONE_AS_TYPED,
      name: 'Ada',
      timezone: 'America/Toronto',
    });
    expect(enrolled.status).toBe(201);
    expect(enrolled.json.result).toMatchObject({ phone_number: PHONE, timezone: 'America/Toronto', status: 'active' });
    const id: string = enrolled.json.result.id;
    const greeting = await waitFor('the greeting', deliveredText(COACH.greeting));
    expect(greeting).toMatchObject({ kind: 'text', to: PHONE, participant_id: id });

    // A forged signature is refused before anything is recorded.
    const forged = await inbound(
      { from: PHONE, text: SAID.forged, id: 'gw-forged' },
      sign('something else', nowInUnixSeconds()),
    );
    expect(forged.status).toBe(401);

    // Intake, turn 1: the habit and the motivation. The gateway retries it (same id): acknowledged, ignored.
    const first = { from: PHONE, text: SAID.habit, id: 'gw-1', timestamp: CLOCK_START };
    expect((await inbound(first)).status).toBe(202);
    expect((await inbound(first)).status).toBe(202);
    await waitFor('the intake question about timing', deliveredText(COACH.askTiming));

    // Intake, turn 2: time and anchor → profile, first prompt shared in the conversation, daily schedule, FEEDBACK.
    expect((await inbound({ from: PHONE, text: SAID.timing, id: 'gw-2', timestamp: CLOCK_START })).status).toBe(202);
    await waitFor('the intake wrap-up with the first prompt', deliveredText(COACH.allSet(COACH.firstPrompt)));
    const afterIntake = (await api('GET', `/conversation/participants/${id}/state`)).json.result;
    expect(afterIntake.conversation_state).toBe('FEEDBACK');
    expect(afterIntake.profile).toMatchObject({
      habit_domain: 'walking',
      motivational_frame: 'more energy',
      preferred_time: '09:00',
      prompt_anchor: 'after breakfast',
      success_count: 0,
    });
    expect(afterIntake.schedules).toEqual([
      expect.objectContaining({ type: 'fixed', fixed_time: '09:00', timezone: 'America/Toronto' }),
    ]);
    expect(afterIntake.pending_jobs).toContainEqual(
      expect.objectContaining({ kind: 'daily_prompt', run_at: PROMPT_INSTANT, status: 'pending' }),
    );
    expect(modelRequests('intake')[0]?.toolNames.toSorted()).toEqual(INTAKE_TOOLS);

    // The study clock moves to the prompt instant: the daily prompt and the Done poll go out.
    const moved = await api('POST', '/admin/clock', { set_to: PROMPT_INSTANT });
    expect(moved.status).toBe(200);
    expect(moved.json.result.now).toBe(PROMPT_INSTANT);
    const prompt = await waitFor('the daily habit prompt', deliveredText(COACH.dailyPrompt));
    expect(prompt).toMatchObject({ kind: 'text', to: PHONE, participant_id: id });
    const poll = await waitFor('the Done poll', () =>
      delivered().find((message) => message.kind === 'poll' && message.poll?.question === 'Did you do it?'),
    );
    expect(poll).toMatchObject({
      kind: 'poll',
      to: PHONE,
      participant_id: id,
      poll: { question: 'Did you do it?', options: ['Done', 'Next time'] },
    });
    expect(poll.poll?.id).toEqual(expect.any(String));

    // The participant taps "Done": a success is counted and the coach answers in a feedback turn.
    const answer = { from: PHONE, text: '', id: 'gw-3', poll_answer: { poll_id: poll.poll?.id, option: 'Done' } };
    expect((await inbound(answer)).status).toBe(202);
    const afterDone = await waitFor('success_count 1', async () => {
      const state = (await api('GET', `/conversation/participants/${id}/state`)).json.result;
      return state.profile?.success_count === 1 ? state : undefined;
    });
    expect(afterDone.conversation_state).toBe('FEEDBACK');
    const reply = await waitFor('the feedback reply', deliveredText(COACH.feedback));
    expect(reply).toMatchObject({ kind: 'text', to: PHONE, participant_id: id });
    const feedbackTurn = modelRequests('feedback');
    expect(feedbackTurn).toHaveLength(1);
    expect(feedbackTurn[0]?.lastMessage).toMatchObject({ role: 'user', content: 'Q: Did you do it? A: Done' });
    expect(feedbackTurn[0]?.toolNames.toSorted()).toEqual(FEEDBACK_TOOLS);
    expect(feedbackTurn[0]?.body.model).toBe('scripted');

    // The retried inbound id and the forged message never reached the coach nor the transcript.
    const history: Json[] = (await api('GET', `/conversation/participants/${id}/history?limit=1000`)).json.result;
    const participantSaid = history.filter((entry) => entry.role === 'user').map((entry) => entry.content);
    expect(participantSaid.filter((text) => text === SAID.habit)).toHaveLength(1);
    expect(participantSaid).not.toContain(SAID.forged);
    const heard = model.requests.map((request) => request.lastMessage).filter((message) => message?.role === 'user');
    expect(heard.filter((message) => message?.content === SAID.habit)).toHaveLength(1);
    expect(heard.some((message) => message?.content === SAID.forged)).toBe(false);

    // The transcript keeps the prompt before its poll.
    const promptEntry = history.findIndex((entry) => entry.content === COACH.dailyPrompt);
    const pollEntry = history.findIndex((entry) => entry.kind === 'poll' && entry.content.startsWith('Did you do it?'));
    expect(promptEntry).toBeGreaterThanOrEqual(0);
    expect(pollEntry).toBeGreaterThan(promptEntry);

    // Every outbound request: signed, idempotency key = id, no message delivered twice; the script saw no surprise.
    for (const request of gateway.requests) {
      expect(request.method).toBe('POST');
      expect(hasValidSignature(request)).toBe(true);
      expect(request.headers['idempotency-key']).toBe(JSON.parse(request.body).id);
    }
    const ids = delivered().map((message) => message.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(unexpected).toEqual([]);
  });

  it('shuts down gracefully on SIGTERM (exit code 0) without having logged an error', async () => {
    const exit = await stopServer();
    const output = describeOutput(serverProcess);
    expect(exit, output).toEqual({ code: 0, signal: null });
    // pino levels: 50 error, 60 fatal (LOG_LEVEL=warn keeps warnings, such as the manual-clock notice, too).
    expect(output, output).not.toMatch(/"level":(50|60)/);
  }, 30_000);
});
