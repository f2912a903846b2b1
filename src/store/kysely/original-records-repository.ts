import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type {
  OriginalRecordRepository,
  ReceiptRecord,
  RecordFilter,
  ResponseFigures,
  ResponseRecord,
} from '../original-records.ts';
import { fromJson, fromTimestamp, toTimestamp } from './column-codecs.ts';
import type { Database } from './database.ts';

/** Import keys looked up per query (far below SQLite's parameter limit). */
const KEY_CHUNK = 500;

// biome-ignore lint/suspicious/noExplicitAny: the helper narrows any table's query by one time column.
type AnyQuery = SelectQueryBuilder<Database, any, any>;

/** `since` ≤ time < `until` on `column`, newest first and at most `limit` rows when a limit is asked for. */
function withinRange<Query extends AnyQuery>(query: Query, column: string, filter: RecordFilter): Query {
  let narrowed = query;
  if (filter.since) narrowed = narrowed.where(sql.ref(column), '>=', toTimestamp(filter.since)) as Query;
  if (filter.until) narrowed = narrowed.where(sql.ref(column), '<', toTimestamp(filter.until)) as Query;
  if (filter.limit !== undefined) {
    narrowed = narrowed.orderBy(sql.ref(column), 'desc').limit(filter.limit) as Query;
  }
  return narrowed;
}

/** The stored poll answer of an inbound message, as a record's `pollAnswer`. */
function pollAnswerOf(value: unknown): Pick<ResponseRecord, 'pollAnswer'> {
  if (value === null || value === undefined) return {};
  const answer = fromJson<{ question?: unknown; option?: unknown }>(value);
  if (typeof answer?.option !== 'string') return {};
  return {
    pollAnswer: {
      option: answer.option,
      ...(typeof answer.question === 'string' ? { question: answer.question } : {}),
    },
  };
}

/** Two sources merged oldest first; with a limit, the newest `limit` of both. */
function merged<Row extends { time: Date }>(rows: Row[], limit: number | undefined): Row[] {
  const sorted = rows.sort((a, b) => a.time.getTime() - b.time.getTime());
  return limit === undefined ? sorted : sorted.slice(Math.max(0, sorted.length - limit));
}

export function createOriginalRecordRepository(db: Kysely<Database>): OriginalRecordRepository {
  return {
    async recordResponse(response) {
      const result = await db
        .insertInto('recorded_responses')
        .values({
          sender: response.sender,
          body: response.body,
          participant_id: response.participantId ?? null,
          received_at: toTimestamp(response.receivedAt),
          import_key: response.importKey ?? null,
        })
        .onConflict((conflict) => conflict.column('import_key').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async recordImportedReceipt(receipt) {
      const result = await db
        .insertInto('imported_receipts')
        .values({
          recipient: receipt.recipient,
          status: receipt.status,
          sent_at: toTimestamp(receipt.sentAt),
          import_key: receipt.importKey,
        })
        .onConflict((conflict) => conflict.column('import_key').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async existingImportKeys(keys) {
      const found = new Set<string>();
      for (let start = 0; start < keys.length; start += KEY_CHUNK) {
        const chunk = keys.slice(start, start + KEY_CHUNK);
        const responses = await db
          .selectFrom('recorded_responses')
          .select('import_key')
          .where('import_key', 'in', chunk)
          .execute();
        const receipts = await db
          .selectFrom('imported_receipts')
          .select('import_key')
          .where('import_key', 'in', chunk)
          .execute();
        for (const row of [...responses, ...receipts]) if (row.import_key) found.add(row.import_key);
      }
      return found;
    },

    async responses(filter = {}) {
      let inbound = db.selectFrom('inbound_messages').select(['from_phone', 'text', 'received_at', 'poll_answer']);
      let recorded = db.selectFrom('recorded_responses').select(['sender', 'body', 'received_at', 'import_key']);
      if (filter.phoneNumber) {
        inbound = inbound.where('from_phone', '=', filter.phoneNumber);
        recorded = recorded.where('sender', '=', filter.phoneNumber);
      }
      const received = await withinRange(inbound, 'received_at', filter).execute();
      const told = await withinRange(recorded, 'received_at', filter).execute();
      const rows: ResponseRecord[] = [
        ...received.map((row) => ({
          from: row.from_phone,
          body: row.text,
          time: fromTimestamp(row.received_at),
          source: 'message' as const,
          ...pollAnswerOf(row.poll_answer),
        })),
        ...told.map((row) => ({
          from: row.sender,
          body: row.body,
          time: fromTimestamp(row.received_at),
          source: row.import_key ? ('imported' as const) : ('api' as const),
        })),
      ];
      return merged(rows, filter.limit);
    },

    async receipts(filter = {}) {
      let deliveries = db
        .selectFrom('deliveries')
        .leftJoin('participants', 'participants.id', 'deliveries.participant_id')
        .select(['participants.phone_number', 'deliveries.status', 'deliveries.created_at'])
        .where('deliveries.status', '!=', 'queued');
      let imported = db.selectFrom('imported_receipts').select(['recipient', 'status', 'sent_at']);
      if (filter.phoneNumber) {
        deliveries = deliveries.where('participants.phone_number', '=', filter.phoneNumber);
        imported = imported.where('recipient', '=', filter.phoneNumber);
      }
      const delivered = await withinRange(deliveries, 'deliveries.created_at', filter).execute();
      const kept = await withinRange(imported, 'sent_at', filter).execute();
      const rows: ReceiptRecord[] = [
        ...delivered.map((row) => ({
          to: row.phone_number ?? '',
          status: row.status,
          time: fromTimestamp(row.created_at),
          source: 'delivery' as const,
        })),
        ...kept.map((row) => ({
          to: row.recipient,
          status: row.status,
          time: fromTimestamp(row.sent_at),
          source: 'imported' as const,
        })),
      ];
      return merged(rows, filter.limit);
    },

    async responseFigures(range = {}) {
      const inbound = withinRange(
        db
          .selectFrom('inbound_messages')
          .select((eb) => [
            'from_phone as sender',
            eb.fn.countAll().as('count'),
            eb.fn.sum(sql<number>`length(text)`).as('length'),
          ])
          .groupBy('from_phone'),
        'received_at',
        range,
      );
      const recorded = withinRange(
        db
          .selectFrom('recorded_responses')
          .select((eb) => ['sender', eb.fn.countAll().as('count'), eb.fn.sum(sql<number>`length(body)`).as('length')])
          .groupBy('sender'),
        'received_at',
        range,
      );
      const figures: ResponseFigures = { total: 0, perSender: {}, totalLength: 0 };
      for (const row of [...(await inbound.execute()), ...(await recorded.execute())]) {
        const count = Number(row.count);
        figures.total += count;
        figures.totalLength += Number(row.length ?? 0);
        figures.perSender[row.sender] = (figures.perSender[row.sender] ?? 0) + count;
      }
      return figures;
    },
  };
}
