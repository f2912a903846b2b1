/**
 * The dashboard's participants table: a keyset page of participant ids in enrolment order (newest first) through the
 * enrolment indexes of migration 022, then the per-row columns for those rows only: the flow state's data keys, the
 * next daily prompt (the participant's pending jobs), the last visible message (the participant's newest transcript
 * entries) and the study-day counts (`participant_adherence`). A page costs the same at any position and with any
 * length of history (a page asked for by its number skips only keys); the total is one count over the same indexed
 * filters.
 */
import { type Kysely, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import { EngagementState } from '../../domain/engagement-state.ts';
import { studyDaySql } from '../migrations/study-day-sql.ts';
import {
  ADHERENCE_RULE_PATTERNS,
  type RosterFilter,
  type RosterKey,
  type RosterPage,
  type RosterPosition,
  type RosterRow,
} from '../ports/roster-reads.ts';
import type { RosterRepository, TranscriptKind } from '../store.ts';
import { fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import { toParticipant } from './participant-repository.ts';
import type { StoreDialect } from './store-dialect.ts';

/** Transcript kinds a participant saw or wrote: the "last message" column. */
const VISIBLE_KINDS = ['message', 'reply', 'proactive', 'poll', 'organiser'] as const;
/** Above every character: a name prefix `p` is the range [p, p + this). */
const AFTER_EVERY_CHARACTER = '\u{10FFFF}';

type Filtered = SelectQueryBuilder<Database, 'participants' | 'flow_states', object>;

export function createRosterRepository(db: Kysely<Database>, dialect: StoreDialect): RosterRepository {
  const expressions = studyDaySql(dialect.name);
  const dataKey = (key: string) => expressions.dataKey('flow_states.state_data', key);
  const foldedName = expressions.foldedName('participants.name');

  function filtered(filter: RosterFilter): Filtered {
    let query: Filtered = db
      .selectFrom('participants')
      .leftJoin('flow_states', 'flow_states.participant_id', 'participants.id');
    if (filter.status !== undefined) query = query.where('participants.status', '=', filter.status);
    const search = filter.search?.trim() ?? '';
    if (/\p{L}/u.test(search)) {
      const prefix = search.toLowerCase();
      query = query.where(foldedName, '>=', prefix).where(foldedName, '<', `${prefix}${AFTER_EVERY_CHARACTER}`);
    } else if (search) {
      const digits = search.replace(/\D/g, '');
      // Nothing searchable (e.g. "%"): nothing matches, rather than everyone.
      query = digits
        ? query.where('participants.phone_number', 'like', `%${digits}%`)
        : query.where(sql<boolean>`1 = 0`);
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
    if (filter.arm !== undefined) {
      const inArm = db.selectFrom('allocations').select('allocations.participant_id').where('arm_id', '=', filter.arm);
      query = query.where('participants.id', 'in', inArm);
    }
    if (filter.adherenceAlert !== undefined) {
      const pattern = filter.adherenceAlert === 'any' ? undefined : ADHERENCE_RULE_PATTERNS[filter.adherenceAlert];
      // Through the alerts' (participant_id, kind) index: a handful of alerts per participant at most.
      query = query.where(
        sql<boolean>`exists (select 1 from alerts a where a.participant_id = participants.id and a.kind = 'adherence' and a.status <> 'resolved'${pattern === undefined ? sql`` : sql` and a.rule like ${pattern}`})`,
      );
    }
    if (filter.idle === true) query = query.where(dataKey('engagementState'), '=', EngagementState.IDLE);
    if (filter.idle === false) {
      const engagement = dataKey('engagementState');
      query = query.where((where) =>
        where.or([where(engagement, 'is', null), where(engagement, '<>', EngagementState.IDLE)]),
      );
    }
    return query;
  }

  /** The page's keys, in display order, and whether there is a row beyond them in the reading direction. */
  async function pageKeys(filter: RosterFilter): Promise<{ ids: string[]; more: boolean }> {
    const position = filter.position;
    // Newest first reads the enrolment index backwards; Previous and Last read it forwards and turn the rows round.
    const forwards = readsForwards(position);
    const order = forwards ? 'asc' : 'desc';
    const row = (key: RosterKey): RawBuilder<unknown> => sql`(${toTimestamp(key.enrolledAt)}, ${key.id})`;
    let query = filtered(filter).select('participants.id');
    if (position !== undefined && typeof position === 'object' && 'after' in position) {
      query = query.where(sql<boolean>`(participants.enrolled_at, participants.id) < ${row(position.after)}`);
    } else if (position !== undefined && typeof position === 'object' && 'before' in position) {
      query = query.where(sql<boolean>`(participants.enrolled_at, participants.id) > ${row(position.before)}`);
    }
    let ordered = query
      .orderBy('participants.enrolled_at', order)
      .orderBy('participants.id', order)
      .limit(literalLimit(filter.limit + 1));
    if (position !== undefined && typeof position === 'object' && 'skip' in position) {
      ordered = ordered.offset(literalLimit(position.skip));
    }
    const rows = await ordered.execute();
    const ids = rows.slice(0, filter.limit).map((found) => found.id);
    return { ids: forwards ? ids.reverse() : ids, more: rows.length > filter.limit };
  }

  async function rowsFor(ids: readonly string[]): Promise<RosterRow[]> {
    if (ids.length === 0) return [];
    const visible = VISIBLE_KINDS.map((kind) => `'${kind}'`).join(', ');
    const lastEntry = (column: 'content' | 'kind' | 'created_at') =>
      sql.raw(
        `(select t.${column} from transcript t where t.participant_id = participants.id and t.kind in (${visible}) ` +
          'order by t.id desc limit 1)',
      );
    const openAdherenceAlert = (column: 'id' | 'rule') =>
      sql.raw(
        `(select a.${column} from alerts a where a.participant_id = participants.id and a.kind = 'adherence' ` +
          "and a.status <> 'resolved' order by a.created_at desc, a.id desc limit 1)",
      );
    const rows = await db
      .selectFrom('participants')
      .leftJoin('flow_states', 'flow_states.participant_id', 'participants.id')
      .leftJoin('participant_adherence', 'participant_adherence.participant_id', 'participants.id')
      .selectAll('participants')
      .select([
        dataKey('conversationState').as('conversation_state'),
        dataKey('engagementState').as('engagement_state'),
        expressions.jsonText('flow_states.state_data', 'userProfile').as('user_profile'),
        sql<
          Date | string | null
        >`(select min(j.run_at) from jobs j where j.participant_id = participants.id and j.status = 'pending' and j.kind = 'daily_prompt')`.as(
          'next_prompt_at',
        ),
        sql<string | null>`${lastEntry('content')}`.as('last_content'),
        sql<string | null>`${lastEntry('kind')}`.as('last_kind'),
        sql<Date | string | null>`${lastEntry('created_at')}`.as('last_at'),
        sql<string | null>`${openAdherenceAlert('id')}`.as('adherence_alert_id'),
        sql<string | null>`${openAdherenceAlert('rule')}`.as('adherence_alert_rule'),
        'participant_adherence.prompts_sent',
        'participant_adherence.prompts_answered',
        'participant_adherence.prompts_done',
      ])
      .where('participants.id', 'in', ids)
      .execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      if (!row) return [];
      return [
        {
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
          promptsSent: Number(row.prompts_sent ?? 0),
          promptsAnswered: Number(row.prompts_answered ?? 0),
          promptsDone: Number(row.prompts_done ?? 0),
          adherenceAlert:
            row.adherence_alert_id === null
              ? undefined
              : { id: row.adherence_alert_id, rule: row.adherence_alert_rule ?? '' },
        },
      ];
    });
  }

  async function page(filter: RosterFilter): Promise<RosterPage> {
    const [keys, count] = await Promise.all([
      filter.limit > 0 ? pageKeys(filter) : { ids: [], more: false },
      filtered(filter)
        .select((expression) => expression.fn.countAll().as('count'))
        .executeTakeFirstOrThrow(),
    ]);
    const total = Number(count.count);
    const position = filter.position;
    const skipped = typeof position === 'object' && 'skip' in position ? position.skip : undefined;
    if (skipped !== undefined && keys.ids.length === 0 && total > 0) return page({ ...filter, position: 'last' });
    const backwards = readsForwards(position);
    return {
      rows: await rowsFor(keys.ids),
      total,
      hasNewer: backwards ? keys.more : skipped !== undefined ? skipped > 0 : position !== undefined,
      hasOlder: backwards ? position !== 'last' : keys.more,
    };
  }

  return { page };
}

/** Previous and Last read the enrolment order oldest first (and turn the rows round); the rest newest first. */
function readsForwards(position: RosterPosition | undefined): boolean {
  return position === 'last' || (typeof position === 'object' && 'before' in position);
}
