/**
 * The dashboard's participants table as ONE query per page: filters, ordering and paging in SQL, and the per-row
 * columns (next prompt, last message, counts) as correlated subqueries over indexed columns, so a page costs the
 * same with 10 or 10,000 participants enrolled.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { EngagementState } from '../../scheduling/timers/engagement-guard.ts';
import type { RosterFilter, RosterRepository, RosterRow, TranscriptKind } from '../store.ts';
import { fromTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import { toParticipant } from './participant-repository.ts';
import type { StoreDialect } from './store-dialect.ts';

/** Transcript kinds a participant saw or wrote: the "last message" column. */
const VISIBLE_KINDS = ['message', 'reply', 'proactive', 'poll', 'organiser'] as const;

export function createRosterRepository(db: Kysely<Database>, dialect: StoreDialect): RosterRepository {
  const dataKey = (key: string): RawBuilder<string | null> =>
    dialect.name === 'postgres'
      ? sql<string | null>`(flow_states.state_data ->> ${sql.lit(key)})`
      : sql<string | null>`json_extract(flow_states.state_data, ${sql.lit(`$.${key}`)})`;

  function filtered(filter: RosterFilter) {
    let query = db.selectFrom('participants').leftJoin('flow_states', 'flow_states.participant_id', 'participants.id');
    if (filter.status !== undefined) query = query.where('participants.status', '=', filter.status);
    const search = filter.search?.trim().toLowerCase();
    if (search) {
      const pattern = `%${search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
      query = query.where(
        sql<boolean>`(lower(participants.name) like ${pattern} escape '\\' or participants.phone_number like ${pattern} escape '\\')`,
      );
    }
    if (filter.subState !== undefined) {
      query =
        filter.subState === 'NONE'
          ? query.where(dataKey('conversationState'), 'is', null)
          : query.where(dataKey('conversationState'), '=', filter.subState);
    }
    if (filter.channel !== undefined) {
      const channels = filter.channel.isDefault ? [filter.channel.name, ''] : [filter.channel.name];
      query = query.where('participants.channel', 'in', channels);
    }
    if (filter.idle !== undefined) {
      const engagement = sql<string>`coalesce(${dataKey('engagementState')}, ${sql.lit(EngagementState.ACTIVE)})`;
      query = query.where(engagement, filter.idle ? '=' : '<>', EngagementState.IDLE);
    }
    return query;
  }

  return {
    async page(filter) {
      const lastEntry = (column: 'content' | 'kind' | 'created_at') =>
        sql.raw(
          `(select t.${column} from transcript t where t.participant_id = participants.id and t.kind in (` +
            `${VISIBLE_KINDS.map((kind) => `'${kind}'`).join(', ')}) order by t.id desc limit 1)`,
        );
      const rows = await filtered(filter)
        .selectAll('participants')
        .select([
          dataKey('conversationState').as('conversation_state'),
          dataKey('engagementState').as('engagement_state'),
          dataKey('userProfile').as('user_profile'),
          sql<
            Date | string | null
          >`(select min(j.run_at) from jobs j where j.participant_id = participants.id and j.kind = 'daily_prompt' and j.status = 'pending')`.as(
            'next_prompt_at',
          ),
          sql<string | null>`${lastEntry('content')}`.as('last_content'),
          sql<string | null>`${lastEntry('kind')}`.as('last_kind'),
          sql<Date | string | null>`${lastEntry('created_at')}`.as('last_at'),
          sql<
            number | string
          >`(select count(*) from events e where e.participant_id = participants.id and e.type = 'prompt-sent')`.as(
            'prompts_sent',
          ),
          sql<
            number | string
          >`(select count(*) from events e where e.participant_id = participants.id and e.type = 'poll-answered')`.as(
            'polls_answered',
          ),
        ])
        .orderBy('participants.enrolled_at', 'desc')
        .orderBy('participants.id')
        .limit(literalLimit(filter.limit))
        .offset(literalLimit(filter.offset))
        .execute();
      const count = await filtered(filter)
        .select((expression) => expression.fn.countAll().as('count'))
        .executeTakeFirstOrThrow();
      return {
        total: Number(count.count),
        rows: rows.map(
          (row): RosterRow => ({
            participant: toParticipant(row),
            conversationState: row.conversation_state ?? undefined,
            idle: row.engagement_state === EngagementState.IDLE,
            userProfile: row.user_profile ?? undefined,
            nextPromptAt: row.next_prompt_at === null ? undefined : fromTimestamp(row.next_prompt_at),
            lastMessage:
              row.last_content === null || row.last_at === null
                ? undefined
                : {
                    content: row.last_content,
                    kind: (row.last_kind ?? 'message') as TranscriptKind,
                    at: fromTimestamp(row.last_at),
                  },
            promptsSent: Number(row.prompts_sent),
            pollsAnswered: Number(row.polls_answered),
          }),
        ),
      };
    },
  };
}
