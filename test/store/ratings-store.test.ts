/**
 * The human ratings repository (`src/store/ratings-records.ts`, migration 060) on SQLite and, with
 * PROMPTPIPE_TEST_PG_URL, on PostgreSQL: ratings round-trip with every field, are listed per conversation in order,
 * and go with their participant when the participant is deleted.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { type NewRating, participantConversation } from '../../src/store/ratings-records.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
const runId = randomBytes(4).toString('hex');
const schemas: string[] = [];
const at = (minutes: number) => new Date(Date.parse('2026-03-02T14:00:00.000Z') + minutes * 60_000);

afterAll(async () => {
  if (!url || schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
});

function rating(id: string, overrides: Partial<NewRating> = {}): NewRating {
  return {
    id,
    conversation: 'A/ada.1',
    rubric: 'r',
    criterion: 'empathy',
    score: 4,
    rater: 'Ruth',
    createdAt: at(1),
    ...overrides,
  };
}

function describeRatings(name: string, makeStore: () => Promise<Store>): void {
  describe(`ratings: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
      await store.participants.create(participantFixture('participant_1', '+15550000001', at(0)));
    });
    afterEach(async () => {
      await store.close();
    });

    it('round-trips every field and lists one conversation oldest first', async () => {
      const study = participantConversation('participant_1');
      await store.ratings.add([
        rating('r2', {
          conversation: study,
          participantId: 'participant_1',
          transcriptEntryId: 7,
          comment: 'kind',
          createdAt: at(3),
        }),
        rating('r1', { createdAt: at(2) }),
        rating('r3', {
          conversation: study,
          participantId: 'participant_1',
          criterion: 'clarity',
          score: 2,
          createdAt: at(4),
        }),
      ]);
      expect(await store.ratings.list({ conversation: study })).toEqual([
        rating('r2', {
          conversation: study,
          participantId: 'participant_1',
          transcriptEntryId: 7,
          comment: 'kind',
          createdAt: at(3),
        }),
        rating('r3', {
          conversation: study,
          participantId: 'participant_1',
          criterion: 'clarity',
          score: 2,
          createdAt: at(4),
        }),
      ]);
      expect((await store.ratings.list()).map((entry) => entry.id)).toEqual(['r1', 'r2', 'r3']);
    });

    it("deletes a participant's ratings with the participant, and keeps an evaluation run's", async () => {
      await store.ratings.add([
        rating('r1'),
        rating('r2', { conversation: participantConversation('participant_1'), participantId: 'participant_1' }),
      ]);
      await store.participants.delete('participant_1');
      expect((await store.ratings.list()).map((entry) => entry.id)).toEqual(['r1']);
    });
  });
}

describeRatings('sqlite', () => createSqliteStore({ filename: ':memory:' }));
describe.skipIf(!url)('postgres', () => {
  describeRatings('postgres', async () => {
    const schema = `promptpipe_test_ratings_${runId}_${schemas.length + 1}`;
    schemas.push(schema);
    return createPostgresStore({ connectionString: url ?? '', schema });
  });
});
