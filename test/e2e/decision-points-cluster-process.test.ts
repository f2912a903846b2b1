/**
 * Decision points on two real `promptpipe serve` processes sharing one PostgreSQL schema and the shared manual clock,
 * with the README's example design:
 * - both instances run the due decision jobs (each claims what it can) through several days, and every participant
 *   has exactly one decision per day, each `send` delivered once;
 * - one instance SIGKILLed while the clock moves through the days: the survivor finishes, still exactly one decision
 *   per participant and day, none twice.
 *
 * Needs PROMPTPIPE_TEST_PG_URL (skipped with a message otherwise, like the other several-instance tests).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { type Cluster, type Instance, type Json, startCluster } from '../support/promptpipe-cluster.ts';
import { readmeExampleDesign } from '../support/readme-study-design.ts';
import { killServer, waitFor } from '../support/server-process.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('Decision points on two instances skipped: PROMPTPIPE_TEST_PG_URL is not set');

const CLOCK_START = '2026-03-02T08:00:00.000Z';
const NUDGE = 'A two-minute pause for your habit?';
const PARTICIPANTS = 12;
const DAYS = ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06'];

let cluster: Cluster | undefined;
let directory = '';
let designFile = '';

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'promptpipe-decision-cluster-'));
  designFile = join(directory, 'study.yaml');
  await writeFile(designFile, readmeExampleDesign());
});
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
}, 30_000);
afterAll(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

async function startTrialCluster(): Promise<Cluster> {
  return startCluster({
    pgUrl: url ?? '',
    instances: 2,
    respond: () => ({ content: 'Welcome!' }),
    env: {
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: CLOCK_START,
      STUDY_DESIGN_FILE: designFile,
    },
  });
}

/** Enrolls alternately on each instance (UTC, so the 12:30 moment is the same wall time for everyone). */
async function enrollAll(running: Cluster): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < PARTICIPANTS; index += 1) {
    const instance = running.instances[index % 2] as Instance;
    const enrolled = await running.api(instance, 'POST', '/conversation/participants', {
      phone_number: `+1555000${String(3000 + index)}`,
      timezone: 'UTC',
    });
    expect(enrolled.status, JSON.stringify(enrolled.json)).toBe(201);
    ids.push(enrolled.json.result.id);
  }
  return ids;
}

/** Starts the two instances (kept in `cluster` for teardown), describes them if the test fails, enrolls everyone. */
async function startEnrolled(
  onTestFailed: TestContext['onTestFailed'],
): Promise<{ running: Cluster; first: Instance; second: Instance; ids: string[] }> {
  cluster = await startTrialCluster();
  const running = cluster;
  onTestFailed(() => console.error(running.describe()));
  const [first, second] = running.instances as [Instance, Instance];
  const ids = await enrollAll(running);
  return { running, first, second, ids };
}

/** Every participant: one decision per day of `DAYS`, none twice; each `send` delivered exactly once. */
async function expectDecidedOnce(running: Cluster, ids: string[]): Promise<void> {
  const rows = await running.db.query(
    'select participant_id, local_date, count(*)::int as count from decisions group by 1, 2 order by 1, 2',
  );
  const expected = ids.flatMap((id) => DAYS.map((day) => ({ participant_id: id, local_date: day, count: 1 })));
  const byKey = (row: Json) => `${row.participant_id}|${row.local_date}`;
  expect(rows.rows.map(byKey).sort()).toEqual(expected.map(byKey).sort());
  expect(rows.rows.every((row: Json) => row.count === 1)).toBe(true);

  const sends = await running.db.query(
    `select sent_outbound_id from decisions where option = 'send' and sent_outbound_id is not null`,
  );
  const delivered = running.delivered().filter((message) => message.text === NUDGE);
  const deliveredIds = new Set(delivered.map((message) => message.id));
  expect(deliveredIds).toEqual(new Set(sends.rows.map((row: Json) => row.sent_outbound_id)));
  // A takeover may repeat a delivery, with the same id: never a second nudge for one decision.
  expect(deliveredIds.size).toBe(sends.rows.length);
  // Skipped options send nothing, and the assessment arm (send 0) never gets a nudge.
  const assessmentSends = await running.db.query(
    `select count(*)::int as count from decisions where arm_id = 'assessment' and option = 'send'`,
  );
  expect(assessmentSends.rows[0].count).toBe(0);
}

describe.skipIf(!url)('decision points on two PostgreSQL instances', () => {
  it('decides each participant\u2019s moment once a day, the jobs shared by both instances', {
    timeout: 180_000,
  }, async ({ onTestFailed }) => {
    const { running, first, second, ids } = await startEnrolled(onTestFailed);

    // Both instances move the shared clock at once (one move at a time, cluster-wide); each claims due jobs.
    const [one, two] = await Promise.all([
      running.api(first, 'POST', '/admin/clock', { set_to: '2026-03-04T08:00:00.000Z' }),
      running.api(second, 'POST', '/admin/clock', { set_to: '2026-03-04T08:00:00.000Z' }),
    ]);
    expect([one.status, two.status]).toEqual([200, 200]);
    expect((await running.api(second, 'POST', '/admin/clock', { set_to: '2026-03-07T08:00:00.000Z' })).status).toBe(
      200,
    );
    await expectDecidedOnce(running, ids);

    const owners = await running.db.query(
      `select split_part(lease_owner, '#', 1) as instance, count(*)::int as count from jobs
        where kind = 'decision_point' and status = 'completed' group by 1 order by 1`,
    );
    expect(owners.rows.map((row: Json) => row.instance)).toEqual(['instance-1', 'instance-2']);
    expect(owners.rows.reduce((sum: number, row: Json) => sum + row.count, 0)).toBe(PARTICIPANTS * DAYS.length);
  });

  it('decides each moment once when one instance is SIGKILLed while deciding', {
    timeout: 180_000,
  }, async ({ onTestFailed }) => {
    const { running, first, second, ids } = await startEnrolled(onTestFailed);

    const moving = running.api(first, 'POST', '/admin/clock', { set_to: '2026-03-05T08:00:00.000Z' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await killServer(second.process);
    expect((await moving).status).toBe(200);
    // The dead instance's claimed jobs come back once its liveness lock is gone or their lease has passed: the
    // survivor moves the clock on until the week is decided.
    await waitFor(
      'every moment decided by the survivor',
      async () => {
        await running.api(first, 'POST', '/admin/clock', { advance_ms: 0 });
        const decided = await running.db.query('select count(*)::int as count from decisions');
        return decided.rows[0].count >= PARTICIPANTS * 3;
      },
      60_000,
      [first.process],
      500,
    );
    expect((await running.api(first, 'POST', '/admin/clock', { set_to: '2026-03-07T08:00:00.000Z' })).status).toBe(200);
    await expectDecidedOnce(running, ids);
  });
});
