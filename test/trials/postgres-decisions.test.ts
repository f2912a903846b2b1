/**
 * Decision points on two instances of one PostgreSQL database (each its own pool, job runner and handlers, like two
 * server processes): both run every due decision job at the same moment — as after a lease expired — and both move
 * their clocks through the days at once: every moment is decided once, and its message sent once.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createDecisionRig, HOUR } from './decision-rig.ts';
import { phoneFor } from './trial-fixture.ts';

const pgUrl = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!pgUrl) console.warn('PostgreSQL decision-point tests skipped: PROMPTPIPE_TEST_PG_URL is not set');

describe.skipIf(!pgUrl)('decision points on two PostgreSQL instances', () => {
  const schema = `promptpipe_test_decisions_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`drop schema if exists "${schema}" cascade`);
    await client.end();
  });

  it('decides each moment once and sends its message once', { timeout: 60_000 }, async () => {
    const connectionString = pgUrl ?? '';
    const first = await createDecisionRig({
      store: await createPostgresStore({ connectionString, schema }),
      idPrefix: 'one-',
    });
    const second = await createDecisionRig({
      store: await createPostgresStore({ connectionString, schema }),
      idPrefix: 'two-',
    });
    const ids: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      const participant = await first.participants.enroll(
        { phoneNumber: phoneFor(index), timezone: 'America/Toronto' },
        { greet: false },
      );
      // Arm b always sends at an available moment: every message is one to count.
      await first.trials.overrideArm(participant.id, { armId: 'b', reason: 'test arm', by: 'test' });
      ids.push(participant.id);
    }

    // The first moments: both instances run the very same jobs at the same time.
    const jobs = (await first.store.jobs.listPending({})).filter((job) => job.kind === 'decision_point');
    expect(jobs).toHaveLength(4);
    const firstRunAt = new Date(Math.max(...jobs.map((job) => job.runAt.getTime())));
    first.clock.set(firstRunAt);
    second.clock.set(firstRunAt);
    await Promise.all(jobs.flatMap((job) => [first.handler(job), second.handler(job)]));

    // Then both runners through two days at once.
    await Promise.all([first.advance(2 * 24 * HOUR), second.advance(2 * 24 * HOUR)]);

    for (const participantId of ids) {
      const decisions = await first.store.decisions.listForParticipant(participantId);
      const moments = decisions.map((row) => `${row.localDate}#${row.slot}`);
      expect(new Set(moments).size).toBe(moments.length);
      // Monday noon through Wednesday noon at least: five moments, none skipped.
      expect(moments.slice(0, 5)).toEqual([
        '2026-03-02#0',
        '2026-03-02#1',
        '2026-03-03#0',
        '2026-03-03#1',
        '2026-03-04#0',
      ]);
      const sent = decisions.filter((row) => row.sentOutboundId !== null);
      expect(await first.nudges(participantId)).toHaveLength(sent.length);
      expect(sent.length).toBeGreaterThanOrEqual(3);
    }
    await first.runner.stop();
    await second.runner.stop();
    await first.store.close();
    await second.store.close();
  });
});
