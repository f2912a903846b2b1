/**
 * Decision points on the real server process: the README's example design, participants enrolled over the API, the
 * manual clock moved through days, the server SIGKILLed while it is deciding, restarted on the same state, moved on:
 * every participant has exactly one decision per local day, none twice, none missing, each with its probabilities.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readmeExampleDesign } from '../support/readme-study-design.ts';
import { killServer, type ServerProcess, startServer, stopServer } from '../support/server-process.ts';

const API_TOKEN = 'decision-e2e-token';
let directory = '';
let server: ServerProcess | undefined;

afterAll(async () => {
  if (server && !server.exited) await stopServer(server);
  if (directory) await rm(directory, { recursive: true, force: true });
}, 30_000);

async function call(method: 'GET' | 'POST', path: string, body?: unknown) {
  const response = await fetch(`${server?.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as { result?: unknown; message?: string } };
}

interface DecisionJson {
  id: string;
  local_date: string;
  available: boolean;
  probabilities: Record<string, number>;
  option: string | null;
  design_hash: string;
}

describe('decision points across a SIGKILL', () => {
  it('decides each moment exactly once', { timeout: 120_000 }, async () => {
    directory = await mkdtemp(join(tmpdir(), 'promptpipe-decisions-'));
    const designFile = join(directory, 'study.yaml');
    await writeFile(designFile, readmeExampleDesign());
    const env = {
      PATH: process.env.PATH ?? '',
      PROMPTPIPE_STATE_DIR: join(directory, 'state'),
      PROMPTPIPE_API_TOKEN: API_TOKEN,
      PROMPTPIPE_CHANNEL: 'webhook',
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: '2026-03-02T08:00:00Z',
      STUDY_DESIGN_FILE: designFile,
      LOG_LEVEL: 'warn',
    };
    server = await startServer(env);
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const enrolled = await call('POST', '/conversation/participants', {
        phone_number: `+1555000020${index}`,
        timezone: 'UTC',
      });
      expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(201);
      ids.push((enrolled.body.result as { id: string }).id);
    }
    expect((await call('POST', '/admin/clock', { set_to: '2026-03-03T08:00:00Z' })).status).toBe(200);

    // Move on three days and SIGKILL the server while it works through them.
    const moving = call('POST', '/admin/clock', { set_to: '2026-03-06T08:00:00Z' }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await killServer(server);
    await moving;

    server = await startServer(env);
    expect((await call('POST', '/admin/clock', { set_to: '2026-03-08T08:00:00Z' })).status).toBe(200);
    const study = await call('GET', '/study');
    const hash = (study.body.result as { hash: string }).hash;
    for (const participantId of ids) {
      const response = await call('GET', `/conversation/participants/${participantId}/decisions`);
      expect(response.status).toBe(200);
      const decisions = response.body.result as DecisionJson[];
      // Monday 2 to Saturday 7 March: one 12:30 (+ jitter) moment a day, each decided once.
      expect(decisions.map((decision) => decision.local_date)).toEqual([
        '2026-03-02',
        '2026-03-03',
        '2026-03-04',
        '2026-03-05',
        '2026-03-06',
        '2026-03-07',
      ]);
      expect(new Set(decisions.map((decision) => decision.id)).size).toBe(6);
      for (const decision of decisions) {
        expect(decision.design_hash).toBe(hash);
        expect(decision.available).toBe(true);
        expect(Object.keys(decision.probabilities).sort()).toEqual(['send', 'skip']);
        expect(['send', 'skip']).toContain(decision.option);
      }
    }
  });
});
