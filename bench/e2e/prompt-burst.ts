/**
 * The 9 a.m. burst: N participants whose daily prompt is due in the same local minute. The state directory is seeded
 * directly (participants with a finished intake, a fixed 09:00 schedule in Toronto and its pending `daily_prompt` job),
 * then the real server process starts on the manual clock (or several instances sharing a PostgreSQL schema), `POST /admin/clock` moves time past the prompt instant,
 * and the benchmark waits until the gateway has every prompt and its Done poll. Reported: time from the clock move to
 * the last delivery, peak memory of the server, and whether anything was lost or delivered twice.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ConversationState } from '../../src/domain/conversation-state.ts';
import { DataKey, type StateData } from '../../src/domain/data-keys.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { newFlowState } from '../../src/domain/participant-data.ts';
import { parseProfile, serializeProfile } from '../../src/domain/profile.ts';
import { armSchedule } from '../../src/scheduling/daily-prompt-jobs.ts';
import { ScheduleType } from '../../src/scheduling/schedule-registry.ts';
import { BENCH_START, benchParticipant } from '../support/fixtures.ts';
import {
  type BenchDatabase,
  databaseLabel,
  openBenchDatabase,
  postgresCpuSeconds,
  type ServerDatabase,
  SQLITE_SINGLE,
} from './bench-database.ts';
import { startInstantModelServer } from './instant-model-server.ts';
import { startOutboundCapture } from './outbound-capture.ts';
import { type ServerGroup, startServerGroup } from './server-group.ts';
import type { ServerProcessOptions } from './server-process.ts';

/** Default number of participants, and the `--quick` one. */
export const BURST_PARTICIPANTS = { full: 100_000, quick: 2_000 } as const;
/** Just past 08:50 in Toronto on the day after {@link BENCH_START}: 09:00 minus the default 10 minutes of prep time. */
const AFTER_PROMPT_INSTANT = '2026-03-03T13:51:00.000Z';
const PREP_TIME_MINUTES = 10;
/** Participants seeded per transaction. */
const SEED_BATCH = 2_000;

export interface BurstResult {
  /** "sqlite", "postgres, 2 instances", … */
  database: string;
  participants: number;
  seedSeconds: number;
  /** From the clock move to the last prompt and poll reaching the gateway. */
  deliverySeconds: number;
  promptsPerSecond: number;
  idleRssMiB: number;
  peakRssMiB: number;
  /** The server's CPU time from the clock move to the last delivery: near deliverySeconds means CPU-bound. */
  serverCpuSeconds: number;
  /** PostgreSQL's CPU time over the same interval (every `postgres` process on the machine); undefined on SQLite. */
  databaseCpuSeconds: number | undefined;
  promptsDelivered: number;
  pollsDelivered: number;
  duplicates: number;
}

function finishedIntakeData(now: Date): StateData {
  const profile = parseProfile('', now);
  profile.habit_domain = 'movement';
  profile.motivational_frame = 'more energy for my children';
  profile.preferred_time = '09:00';
  profile.prompt_anchor = 'after breakfast';
  return {
    [DataKey.conversationState]: ConversationState.FEEDBACK,
    [DataKey.userProfile]: serializeProfile(profile),
  };
}

async function seed(storage: BenchDatabase, count: number): Promise<void> {
  const store = await storage.openStore();
  const newId = sequentialIds();
  const arming = { store, newId, prepTimeMinutes: PREP_TIME_MINUTES, random: Math.random };
  try {
    for (let first = 0; first < count; first += SEED_BATCH) {
      await store.transaction(async (tx) => {
        for (let index = first; index < Math.min(count, first + SEED_BATCH); index += 1) {
          const participant = benchParticipant(index);
          await tx.participants.create(participant);
          await tx.flowStates.save(newFlowState(participant.id, BENCH_START, finishedIntakeData(BENCH_START)));
          await armSchedule(arming, {
            participantId: participant.id,
            now: BENCH_START,
            schedule: {
              id: `schedule_${index}`,
              type: ScheduleType.FIXED,
              fixed_time: '09:00',
              timezone: participant.timezone,
              created_at: BENCH_START.toISOString(),
              timer_id: '',
            },
          });
        }
      });
    }
  } finally {
    await store.close();
  }
}

export async function runPromptBurst(
  count: number,
  serverOptions: ServerProcessOptions = {},
  database: ServerDatabase = SQLITE_SINGLE,
): Promise<BurstResult> {
  const stateDirectory = await mkdtemp(join(tmpdir(), 'promptpipe-bench-burst-'));
  const model = await startInstantModelServer();
  const capture = await startOutboundCapture();
  let storage: BenchDatabase | undefined;
  let server: ServerGroup | undefined;
  try {
    storage = await openBenchDatabase(database, stateDirectory);
    const seedStart = performance.now();
    await seed(storage, count);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    server = await startServerGroup(
      database.instances,
      {
        PROMPTPIPE_STATE_DIR: stateDirectory,
        OPENAI_BASE_URL: model.baseUrl,
        OPENAI_API_KEY: 'bench',
        PROMPTPIPE_WEBHOOK_URL: capture.url,
        PROMPTPIPE_CLOCK: 'manual',
        PROMPTPIPE_CLOCK_START: BENCH_START.toISOString(),
        SCHEDULER_PREP_TIME_MINUTES: String(PREP_TIME_MINUTES),
        ...storage.environment,
      },
      serverOptions,
    );
    const idleRssMiB = server.rssMiB();
    const started = performance.now();
    const cpuBefore = server.cpuSeconds();
    const databaseCpuBefore = postgresCpuSeconds();
    await server.postToFirst('/admin/clock', { set_to: AFTER_PROMPT_INSTANT });
    await Promise.all([capture.waitForCount('text', count), capture.waitForCount('poll', count)]);
    const deliverySeconds = (performance.now() - started) / 1000;
    return {
      database: databaseLabel(database),
      participants: count,
      seedSeconds,
      deliverySeconds,
      promptsPerSecond: count / deliverySeconds,
      idleRssMiB,
      peakRssMiB: server.peakRssMiB(),
      serverCpuSeconds: server.cpuSeconds() - cpuBefore,
      databaseCpuSeconds: database.postgresUrl === undefined ? undefined : postgresCpuSeconds() - databaseCpuBefore,
      promptsDelivered: capture.countOf('text'),
      pollsDelivered: capture.countOf('poll'),
      duplicates: capture.duplicates,
    };
  } finally {
    await server?.stop();
    await storage?.dispose();
    await capture.close();
    await model.close();
    await rm(stateDirectory, { recursive: true, force: true });
  }
}
