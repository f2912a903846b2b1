/**
 * End-to-end turns through the public interface: the real server process (SQLite, default settings; or one or more
 * instances sharing a PostgreSQL schema, messages sent to them in turn), the webhook channel in and out, and an
 * instant fake model. Each participant sends its next message as soon as the reply to the
 * previous one reached the gateway; latency is from the inbound POST to the reply's arrival. Every scenario gets a
 * fresh server, so its peak memory is its own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { RunProfile } from '../support/benchmark.ts';
import { latencyPercentiles } from '../support/statistics.ts';
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

export interface EndToEndResult {
  name: string;
  turns: number;
  turnsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** After enrolment and greetings, before the load. */
  idleRssMiB: number;
  /** The process's high-water mark at the end of the load. */
  peakRssMiB: number;
  /** The server's CPU time per measured turn, in milliseconds (all threads, all instances). */
  serverCpuMsPerTurn: number;
  /** PostgreSQL's CPU time per measured turn (every `postgres` process on the machine); undefined on SQLite. */
  databaseCpuMsPerTurn: number | undefined;
  /**
   * The database's size after the run (WAL checkpointed, free pages left out) divided by every turn it holds:
   * the greetings, the warm-up turns and the measured ones. Everything a turn stores counts: transcript, events,
   * LLM-call provenance, inbound messages, jobs, delivery records, the flow state and every index.
   */
  bytesStoredPerTurn: number;
  /** Notes such as duplicates seen at the gateway; empty when all went well. */
  remarks: string;
}

const WARMUP_TURNS_PER_PARTICIPANT = 5;
/** Measurement time of one scenario. */
const MEASURE_MS = { full: 10_000, quick: 2_000 } as const;
/** How long the server idles after the greetings before its idle memory is read. */
const SETTLE_MS = 1_000;

const phoneOf = (index: number): string => `+1555${String(900_0000 + index).padStart(7, '0')}`;

async function enroll(server: ServerGroup, count: number): Promise<{ id: string; phone: string }[]> {
  const participants: { id: string; phone: string }[] = [];
  for (let index = 0; index < count; index += 1) {
    const phone = phoneOf(index);
    const answer = (await server.post('/conversation/participants', { phone_number: phone })) as {
      result: { id: string };
    };
    participants.push({ id: answer.result.id, phone });
  }
  return participants;
}

export async function runEndToEndTurns(
  participantCount: number,
  profile: RunProfile,
  serverOptions: ServerProcessOptions = {},
  database: ServerDatabase = SQLITE_SINGLE,
): Promise<EndToEndResult> {
  const stateDirectory = await mkdtemp(join(tmpdir(), 'promptpipe-bench-e2e-'));
  const model = await startInstantModelServer();
  const capture = await startOutboundCapture();
  let storage: BenchDatabase | undefined;
  let server: ServerGroup | undefined;
  try {
    storage = await openBenchDatabase(database, stateDirectory);
    server = await startServerGroup(
      database.instances,
      {
        PROMPTPIPE_STATE_DIR: stateDirectory,
        OPENAI_BASE_URL: model.baseUrl,
        OPENAI_API_KEY: 'bench',
        PROMPTPIPE_WEBHOOK_URL: capture.url,
        ...storage.environment,
      },
      serverOptions,
    );
    const running = server;
    const participants = await enroll(running, participantCount);
    await Promise.all(participants.map((participant) => capture.nextText(participant.id)));
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const idleRssMiB = running.rssMiB();

    let messageNumber = 0;
    const turn = async (participant: { id: string; phone: string }): Promise<number> => {
      messageNumber += 1;
      const started = performance.now();
      const reply = capture.nextText(participant.id);
      await running.post('/channels/webhook/messages', {
        from: participant.phone,
        text: `Message ${messageNumber}: I walked for ten minutes after lunch, but skipped yesterday.`,
        id: `bench-in-${messageNumber}`,
      });
      await reply;
      return performance.now() - started;
    };

    await Promise.all(
      participants.map(async (participant) => {
        for (let index = 0; index < WARMUP_TURNS_PER_PARTICIPANT; index += 1) await turn(participant);
      }),
    );

    const latencies: number[] = [];
    const cpuBefore = running.cpuSeconds();
    const databaseCpuBefore = postgresCpuSeconds();
    const started = performance.now();
    const deadline = started + MEASURE_MS[profile.mode];
    await Promise.all(
      participants.map(async (participant) => {
        while (performance.now() < deadline) latencies.push(await turn(participant));
      }),
    );
    const elapsedMs = performance.now() - started;
    const perTurn = (seconds: number) => (seconds * 1000) / Math.max(1, latencies.length);
    const serverCpuMsPerTurn = perTurn(running.cpuSeconds() - cpuBefore);
    const databaseCpuMsPerTurn =
      database.postgresUrl === undefined ? undefined : perTurn(postgresCpuSeconds() - databaseCpuBefore);
    const peakRssMiB = running.peakRssMiB();
    await running.stop();
    const allTurns = participantCount * (1 + WARMUP_TURNS_PER_PARTICIPANT) + latencies.length;
    const bytesStoredPerTurn = (await storage.storedBytes()) / allTurns;
    return {
      name: `${databaseLabel(database)}: end to end, ${participantCount} participant${participantCount === 1 ? '' : 's'} (webhook in/out)`,
      turns: latencies.length,
      turnsPerSecond: latencies.length / (elapsedMs / 1000),
      ...latencyPercentiles(latencies),
      idleRssMiB,
      peakRssMiB,
      serverCpuMsPerTurn,
      databaseCpuMsPerTurn,
      bytesStoredPerTurn,
      remarks: capture.duplicates > 0 ? `${capture.duplicates} duplicate deliveries` : '',
    };
  } finally {
    await server?.stop();
    await storage?.dispose();
    await capture.close();
    await model.close();
    await rm(stateDirectory, { recursive: true, force: true });
  }
}
