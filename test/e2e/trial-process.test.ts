/**
 * A trial on the real server process: a design with a mistake stops `promptpipe serve` naming the line and the field;
 * the README's example design is served by `GET /study` with its hash; enrollment allocates an arm shown on the
 * participant; a staff override needs a reason, changes the arm in force and is recorded.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_BLOCK, nextAllocation } from '../../src/trials/allocation-sequence.ts';
import { parseStudyDesign } from '../../src/trials/study-design-file.ts';
import { readmeExampleDesign } from '../support/readme-study-design.ts';
import { describeOutput, type ServerProcess, spawnServer, startServer, stopServer } from '../support/server-process.ts';
import { countArms } from '../trials/trial-fixture.ts';

const API_TOKEN = 'trial-e2e-token';
let directory = '';
let server: ServerProcess | undefined;

function baseEnv(stateDir: string, designFile: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    PROMPTPIPE_CHANNEL: 'webhook',
    PROMPTPIPE_CLOCK: 'manual',
    STUDY_DESIGN_FILE: designFile,
    LOG_LEVEL: 'warn',
  };
}

// biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
type Json = any;

async function call(method: 'GET' | 'POST', path: string, body?: unknown) {
  const response = await fetch(`${server?.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    body: (await response.json()) as { status: string; message?: string; result?: Json },
  };
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'promptpipe-trial-'));
}, 30_000);

afterAll(async () => {
  if (server && !server.exited) await stopServer(server);
  await rm(directory, { recursive: true, force: true });
}, 30_000);

describe('a trial on the real server', () => {
  it('refuses to start with a design that has a mistake, naming the line and the field', {
    timeout: 60_000,
  }, async () => {
    const designFile = join(directory, 'broken.yaml');
    await writeFile(designFile, readmeExampleDesign().replace('weight: 2', 'weight: 0'));
    const broken = spawnServer(baseEnv(join(directory, 'broken-state'), designFile));
    const exit = await broken.exit;
    expect(exit.code, describeOutput(broken)).not.toBe(0);
    expect(describeOutput(broken)).toMatch(/broken\.yaml line 7 \(arms\.0\.weight\): must be positive/);
  });

  it('serves the design, allocates at enrollment and records an override', { timeout: 90_000 }, async () => {
    const designFile = join(directory, 'study.yaml');
    await writeFile(designFile, readmeExampleDesign());
    server = await startServer(baseEnv(join(directory, 'state'), designFile));

    const study = await call('GET', '/study');
    expect(study.status).toBe(200);
    expect(study.body.result.hash).toBe(parseStudyDesign(readmeExampleDesign(), 'README').hash);
    expect(study.body.result.design.arms.map((arm: { id: string }) => arm.id)).toEqual([
      'coach',
      'static',
      'assessment',
    ]);

    const arms: string[] = [];
    for (let index = 0; index < 8; index += 1) {
      const enrolled = await call('POST', '/conversation/participants', { phone_number: `+1555000010${index}` });
      expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(201);
      arms.push(enrolled.body.result.arm);
    }
    // One stratum (language en, no import site): the arms are the design's sequence for it, as an auditor recomputes.
    const design = parseStudyDesign(readmeExampleDesign(), 'README').design;
    let state = NO_BLOCK;
    const expected: string[] = [];
    for (let index = 0; index < 8; index += 1) {
      const next = nextAllocation(design, 'language=en|import.site=', state);
      expected.push(next.armId);
      state = next.state;
    }
    expect(arms).toEqual(expected);

    const list = await call('GET', '/conversation/participants');
    const participantId: string = list.body.result[0].id;
    expect(list.body.result[0].arm).toBe(arms[0]);
    const target = arms[0] === 'assessment' ? 'static' : 'assessment';

    const withoutReason = await call('POST', `/conversation/participants/${participantId}/arm`, {
      arm: target,
      reason: ' ',
    });
    expect(withoutReason.status).toBe(400);
    expect(withoutReason.body.message).toMatch(/reason/);
    const unknownArm = await call('POST', `/conversation/participants/${participantId}/arm`, { arm: 'x', reason: 'r' });
    expect(unknownArm.status).toBe(400);
    expect((await call('GET', `/conversation/participants/${participantId}`)).body.result.arm).toBe(arms[0]);

    const override = await call('POST', `/conversation/participants/${participantId}/arm`, {
      arm: target,
      reason: 'enrolled twice by mistake',
    });
    expect(override.status).toBe(200);
    expect(override.body.result).toMatchObject({
      arm: target,
      allocated_arm: arms[0],
      reason: 'enrolled twice by mistake',
    });
    expect((await call('GET', `/conversation/participants/${participantId}`)).body.result.arm).toBe(target);

    const report = await call('GET', '/study/allocations');
    expect(report.body.result).toMatchObject({ total: 8, overrides: 1, design_hash: study.body.result.hash });
    const drawn = Object.fromEntries(
      report.body.result.arms.map((arm: { arm: string; drawn: number }) => [arm.arm, arm.drawn]),
    );
    expect(drawn).toEqual({ coach: 0, static: 0, assessment: 0, ...countArms(expected) });
  });
});
