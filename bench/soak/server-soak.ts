/**
 * The soak run of `npm run bench`: memory over time of the REAL server process (`node src/cli/main.ts serve`, SQLite
 * in a temporary state dir, the webhook channel to a local receiver, the scripted OpenAI-compatible model, the
 * manual clock). Participants are enrolled and go through an intake that saves a profile and a daily schedule; then
 * rounds of one message per participant (each a full turn: HTTP in, model call, reply delivered) alternate with
 * `POST /admin/clock` advancing a day (daily prompts, polls, reminders, feedback timers: every job due runs).
 *
 * It reports the server's resident set size (RSS) and V8 heap, read from its own `/metrics`, after the warm-up
 * (enrolment and intake) and at the end, plus the peak seen. A leak shows up as an end RSS that keeps growing with
 * the number of turns. Not a test: nothing is asserted, the numbers go to docs/benchmarks.md.
 * `PROMPTPIPE_SOAK_NODE_OPTIONS` is passed to the server as NODE_OPTIONS (a leak check with a small heap limit).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type HttpReceiver, startHttpReceiver } from '../../test/support/http-receiver.ts';
import {
  type ScriptedChatRequest,
  type ScriptedReply,
  startScriptedOpenAiServer,
} from '../../test/support/scripted-openai-server.ts';
import { killServer, type ServerProcess, startServer } from '../../test/support/server-process.ts';

export interface SoakOptions {
  participants: number;
  /** Rounds of one message per participant. */
  rounds: number;
  /** A simulated day passes every this many rounds. */
  roundsPerDay: number;
}

export const FULL_SOAK: SoakOptions = { participants: 20, rounds: 150, roundsPerDay: 10 };
export const QUICK_SOAK: SoakOptions = { participants: 10, rounds: 20, roundsPerDay: 5 };

export interface MemorySample {
  turns: number;
  rssBytes: number;
  heapUsedBytes: number;
}

export interface SoakResult {
  options: SoakOptions;
  turns: number;
  days: number;
  jobsRun: number;
  deliveries: number;
  seconds: number;
  start: MemorySample;
  end: MemorySample;
  peakRssBytes: number;
  samples: MemorySample[];
}

const REPLY_PREFIX = 'Noted, thanks:';

/** The coach: intake tools on the first message, a short reply to everything else. */
function coach(request: ScriptedChatRequest): ScriptedReply {
  const messages = request.body.messages;
  const last = request.lastMessage;
  const system = messages[0]?.content ?? '';
  if (system.startsWith('You write one short daily habit prompt')) return { content: 'Walk for five minutes now.' };
  if (last?.content?.includes('expecting a greeting')) return { content: 'Hi! Which habit shall we build?' };
  if (last?.role === 'tool') {
    const previous = [...messages].reverse().find((message) => message.tool_calls)?.tool_calls?.[0];
    if (previous?.function.name === 'save_user_profile') {
      return {
        toolCalls: [{ name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '09:00' } }],
      };
    }
    return { content: `${REPLY_PREFIX} all set.` };
  }
  if (last?.content === 'start the intake') {
    return {
      toolCalls: [
        {
          name: 'save_user_profile',
          arguments: {
            habit_domain: 'walking',
            motivational_frame: 'energy',
            preferred_time: '09:00',
            prompt_anchor: 'after breakfast',
          },
        },
      ],
    };
  }
  return { content: `${REPLY_PREFIX} ${last?.content ?? ''}` };
}

async function memory(server: ServerProcess, turns: number): Promise<MemorySample> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const read = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    turns,
    rssBytes: read('promptpipe_process_resident_memory_bytes'),
    heapUsedBytes: read('promptpipe_nodejs_heap_size_used_bytes'),
  };
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`soak: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function post(server: ServerProcess, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

export async function runServerSoak(options: SoakOptions, progress: (line: string) => void): Promise<SoakResult> {
  const stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-soak-'));
  const model = await startScriptedOpenAiServer({ respond: coach });
  const gateway: HttpReceiver = await startHttpReceiver();
  let server: ServerProcess | undefined;
  // Count replies without keeping every request: the receiver's list is emptied as it is counted.
  let replies = 0;
  let deliveries = 0;
  const drain = (): void => {
    for (const request of gateway.requests.splice(0)) {
      deliveries += 1;
      if (request.body.includes(REPLY_PREFIX)) replies += 1;
    }
  };
  try {
    server = await startServer({
      PATH: process.env.PATH ?? '',
      PROMPTPIPE_STATE_DIR: stateDir,
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'soak',
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00Z',
      PROMPTPIPE_CHANNEL: 'webhook',
      PROMPTPIPE_WEBHOOK_URL: gateway.url,
      LOG_LEVEL: 'warn',
      // A leak check: e.g. `--max-old-space-size=128` makes a real leak crash the server instead of growing.
      ...(process.env.PROMPTPIPE_SOAK_NODE_OPTIONS ? { NODE_OPTIONS: process.env.PROMPTPIPE_SOAK_NODE_OPTIONS } : {}),
    });
    const live = server;
    const phones = Array.from(
      { length: options.participants },
      (_, index) => `+1555${String(2_000_000 + index).padStart(7, '0')}`,
    );
    for (const phone of phones) {
      const enrolled = await post(live, '/conversation/participants', { phone_number: phone, timezone: 'UTC' });
      if (enrolled.status !== 201) throw new Error(`soak: enrolment answered ${enrolled.status}`);
    }
    let turns = 0;
    let messageId = 0;
    const sendRound = async (text: (phone: string) => string): Promise<void> => {
      const expected = replies + phones.length;
      await Promise.all(
        phones.map(async (phone) => {
          messageId += 1;
          const answer = await post(live, '/channels/webhook/messages', {
            from: phone,
            text: text(phone),
            id: `soak-${messageId}`,
          });
          if (answer.status !== 202) throw new Error(`soak: inbound answered ${answer.status}`);
        }),
      );
      await waitFor(`${expected} replies`, () => {
        drain();
        return replies >= expected;
      });
      turns += phones.length;
    };
    await sendRound(() => 'start the intake');
    const start = await memory(live, turns);
    const samples: MemorySample[] = [start];
    let peakRssBytes = start.rssBytes;
    let jobsRun = 0;
    let days = 0;
    const began = performance.now();
    for (let round = 1; round <= options.rounds; round += 1) {
      await sendRound((phone) => `round ${round} from ${phone}: walked a bit today, felt fine`);
      if (round % options.roundsPerDay === 0) {
        const moved = await post(live, '/admin/clock', { advance_ms: 24 * 3_600_000 });
        jobsRun += (moved.json as { result: { jobs_run: number } }).result.jobs_run;
        days += 1;
        const sample = await memory(live, turns);
        samples.push(sample);
        peakRssBytes = Math.max(peakRssBytes, sample.rssBytes);
        progress(
          `soak: ${turns} turns, ${days} days, ${jobsRun} jobs, RSS ${(sample.rssBytes / 2 ** 20).toFixed(1)} MiB`,
        );
      }
    }
    drain();
    const end = await memory(live, turns);
    peakRssBytes = Math.max(peakRssBytes, end.rssBytes);
    if (samples.at(-1)?.turns !== end.turns) samples.push(end);
    return {
      options,
      turns,
      days,
      jobsRun,
      deliveries,
      seconds: (performance.now() - began) / 1000,
      start,
      end,
      peakRssBytes,
      samples,
    };
  } finally {
    if (server) await killServer(server);
    await model.close();
    await gateway.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

const mebibytes = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export function formatSoak(result: SoakResult): string {
  const { options } = result;
  return [
    `server soak (real process, SQLite, manual clock): ${options.participants} participants, ` +
      `${result.turns} turns, ${result.days} simulated days, ${result.jobsRun} timer jobs run by /admin/clock, ` +
      `${result.deliveries} deliveries, ${result.seconds.toFixed(1)} s`,
    '',
    '| point | turns | RSS | V8 heap used |',
    '| --- | ---: | ---: | ---: |',
    `| start (after enrolment and intake) | ${result.start.turns} | ${mebibytes(result.start.rssBytes)} | ${mebibytes(result.start.heapUsedBytes)} |`,
    `| end | ${result.end.turns} | ${mebibytes(result.end.rssBytes)} | ${mebibytes(result.end.heapUsedBytes)} |`,
    `| peak RSS seen | | ${mebibytes(result.peakRssBytes)} | |`,
    '',
    `after each simulated day (turns: RSS / heap used): ${result.samples
      .map((sample) => `${sample.turns}: ${mebibytes(sample.rssBytes)} / ${mebibytes(sample.heapUsedBytes)}`)
      .join(', ')}`,
  ].join('\n');
}
