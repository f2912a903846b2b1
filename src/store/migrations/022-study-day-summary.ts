import { type Kysely, sql } from 'kysely';
import { atomically } from './atomically.ts';
import type { SchemaDialect } from './schema-dialect.ts';
import { studyDaySql } from './study-day-sql.ts';

/**
 * What the dashboard reads, kept as the events happen instead of recomputed from the whole history on every page
 * (the roster counted each row's events through the events' type index, ≈ 131k rows per row; the overview replayed
 * every event and transcript entry of the study):
 * - `participant_days`: one row per participant and local study day that had a daily prompt: when it was sent, the
 *   participant's first message after it (before the next prompt) and whether they answered "Done". Keyed by
 *   participant and date (clustered on SQLite), indexed by date for the overview's days.
 * - `participant_adherence`: each participant's counts of those days (sent, answered, Done) and `adherence_rank`
 *   (Done per thousand prompts; 1001 before the first prompt, so they sort after everyone), indexed for the adherence
 *   grid's keyset order.
 * - `participant_status_periods`: when a participant was not active (paused, withdrawn, completed) and until when,
 *   for the grid's "paused" days.
 * All three go with their participant and are written in the transaction of the event or transcript entry that
 * changes them (study-day-projection.ts), and filled here from the existing events and transcript.
 *
 * Indexes for the overview's usage per UTC date (see `createUsageIndexes`), and for the roster's keyset pages and
 * filters: enrolment order, status then enrolment, the name folded to lower
 * case (prefix search; byte order, so a prefix is a range whatever the database's collation), and the two data keys
 * the roster filters on (`conversationState`, `engagementState`) as expression indexes of the flow state.
 */
export function up(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  return atomically(db, async (transaction) => {
    await createTables(transaction, dialect);
    await createRosterIndexes(transaction, dialect);
    await createUsageIndexes(transaction);
    await backfillStudyDays(transaction, dialect);
  });
}

async function createTables(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  await dialect
    .clusterByPrimaryKey(
      db.schema
        .createTable('participant_days')
        .addColumn('participant_id', 'text', (column) =>
          column.notNull().references('participants.id').onDelete('cascade'),
        )
        .addColumn('local_date', 'text', (column) => column.notNull())
        .addColumn('prompt_sent_at', dialect.timestampType, (column) => column.notNull())
        .addColumn('first_reply_at', dialect.timestampType)
        .addColumn('reply_seconds', 'integer')
        .addColumn('done', 'integer', (column) => column.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('participant_days_primary_key', ['participant_id', 'local_date']),
    )
    .execute();
  await db.schema
    .createIndex('participant_days_date_index')
    .on('participant_days')
    .columns(['local_date', 'reply_seconds', 'done'])
    .execute();

  await db.schema
    .createTable('participant_adherence')
    .addColumn('participant_id', 'text', (column) =>
      column.primaryKey().references('participants.id').onDelete('cascade'),
    )
    .addColumn('prompts_sent', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('prompts_answered', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('prompts_done', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('adherence_rank', 'integer', (column) => column.notNull().defaultTo(1001))
    .execute();
  await db.schema
    .createIndex('participant_adherence_rank_index')
    .on('participant_adherence')
    .columns(['adherence_rank', 'participant_id'])
    .execute();

  await db.schema
    .createTable('participant_status_periods')
    .addColumn('participant_id', 'text', (column) => column.notNull().references('participants.id').onDelete('cascade'))
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('started_at', dialect.timestampType, (column) => column.notNull())
    .addColumn('ended_at', dialect.timestampType)
    .addPrimaryKeyConstraint('participant_status_periods_primary_key', ['participant_id', 'started_at'])
    .execute();
}

/**
 * The overview's usage figures, per UTC date: the LLM calls' creation index also holds the outcome and the tokens (one
 * index-only range per date instead of a row per call), and failed deliveries get an index of their own, holding
 * only failed jobs (the job indexes of migration 014 cover pending and running jobs only).
 */
async function createUsageIndexes(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('llm_calls_created_at_index').execute();
  await db.schema
    .createIndex('llm_calls_created_at_index')
    .on('llm_calls')
    .columns(['created_at', 'id', 'outcome', 'total_tokens'])
    .execute();
  await db.schema
    .createIndex('jobs_failed_updated_at_index')
    .on('jobs')
    .column('updated_at')
    .where(sql.ref('status'), '=', 'failed')
    .execute();
}

async function createRosterIndexes(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  const flavor = studyDaySql(dialect.name);
  await db.schema
    .createIndex('participants_enrolled_index')
    .on('participants')
    .columns(['enrolled_at', 'id'])
    .execute();
  await db.schema
    .createIndex('participants_status_enrolled_index')
    .on('participants')
    .columns(['status', 'enrolled_at', 'id'])
    .execute();
  await sql`create index participants_name_index on participants (${flavor.foldedName('name')}, id)`.execute(db);
  for (const key of ['conversationState', 'engagementState']) {
    await sql`create index ${sql.id(`flow_states_${key}_index`)} on flow_states (${flavor.dataKey('state_data', key)})`.execute(
      db,
    );
  }
}

/**
 * Fills the three tables from the events and the transcript, with the same rules as study-day-projection.ts: a day
 * is a `prompt-sent` event (its `local_date`; the first prompt of a date when there were two); a participant message
 * or a "Done" (`poll-answered`, `success-counted`) belongs to the latest prompt sent at or before it. One pass over
 * the prompts, the participant's messages and the Done answers in time order, attributing each to the latest prompt
 * with a running maximum. Also used by the dashboard benchmark after it seeds a study.
 */
export async function backfillStudyDays(db: Kysely<unknown>, dialect: SchemaDialect): Promise<void> {
  const flavor = studyDaySql(dialect.name);
  const enrolled = sql.raw('participant_id in (select id from participants)');
  await sql`
    insert into participant_days (participant_id, local_date, prompt_sent_at, first_reply_at, reply_seconds, done)
    with stream as (
      select participant_id, created_at as at, 0 as what,
        coalesce(${flavor.jsonText('data', 'local_date')}, ${flavor.utcDate('created_at')}) as local_date
      from events where type = 'prompt-sent' and ${enrolled}
      union all
      select participant_id, created_at, 1, null
      from transcript where role = 'user' and kind = 'message' and ${enrolled}
      union all
      select participant_id, created_at, 2, null
      from events where type = 'poll-answered' and ${flavor.jsonText('data', 'kind')} = 'success-counted' and ${enrolled}
    ),
    attributed as (
      select participant_id, at, what, local_date,
        max(case when what = 0 then at end)
          over (partition by participant_id order by at, what rows between unbounded preceding and current row) as prompt_at
      from stream
    ),
    days as (
      select participant_id, prompt_at, max(local_date) as local_date,
        min(case when what = 1 then at end) as first_reply_at, max(case when what = 2 then 1 else 0 end) as done
      from attributed where prompt_at is not null
      group by participant_id, prompt_at
    )
    select participant_id, local_date, prompt_at, first_reply_at, ${flavor.secondsBetween('prompt_at', 'first_reply_at')}, done
    from days where true order by participant_id, prompt_at
    on conflict do nothing`.execute(db);

  await sql`
    insert into participant_adherence (participant_id, prompts_sent, prompts_answered, prompts_done, adherence_rank)
    select participants.id, count(days.participant_id), count(days.first_reply_at), coalesce(sum(days.done), 0),
      case when count(days.participant_id) = 0 then 1001 else coalesce(sum(days.done), 0) * 1000 / count(days.participant_id) end
    from participants left join participant_days days on days.participant_id = participants.id
    group by participants.id`.execute(db);

  await sql`
    insert into participant_status_periods (participant_id, status, started_at, ended_at)
    select participant_id, status, created_at, ended_at from (
      select participant_id, ${flavor.jsonText('data', 'status_to')} as status, created_at,
        lead(created_at) over (partition by participant_id order by created_at, id) as ended_at
      from events
      where type = 'participant-updated' and ${flavor.jsonText('data', 'status_to')} is not null and ${enrolled}
    ) changes
    where status <> 'active'
    on conflict do nothing`.execute(db);
}
