/**
 * Reads an original PromptPipe database, SQLite file or PostgreSQL DSN, read-only: the tables of its
 * `internal/store/migrations_*.sql` that `migrate-from-original` imports or reports. A table an older version did not
 * have is read as empty. Timestamps come back as instants whatever the driver stored (Go's SQLite driver writes
 * `2006-01-02 15:04:05.999999999-07:00`; PostgreSQL `TIMESTAMP` has no zone and is read as UTC).
 */
import { AppError, errorMessage } from '../../domain/errors.ts';

export interface OriginalParticipantRow {
  id: string;
  phoneNumber: string;
  name: string;
  gender: string;
  ethnicity: string;
  background: string;
  status: string;
  enrolledAt: Date | undefined;
  createdAt: Date | undefined;
  updatedAt: Date | undefined;
}

export interface OriginalFlowStateRow {
  participantId: string;
  flowType: string;
  currentState: string;
  stateData: Record<string, unknown>;
}

export interface OriginalJobRow {
  id: string;
  kind: string;
  runAt: Date | undefined;
  payload: Record<string, unknown>;
  status: string;
}

export interface OriginalTables {
  /** What was read: a SQLite file's path, or "PostgreSQL" (never the DSN: it may hold a password). */
  source: string;
  participants: OriginalParticipantRow[];
  flowStates: OriginalFlowStateRow[];
  jobs: OriginalJobRow[];
  receipts: { id: number; recipient: string; status: string; time: number }[];
  responses: { id: number; sender: string; body: string; time: number }[];
  /** Rows of the tables that are reported, not imported, by table. */
  otherCounts: Record<string, number>;
}

/** Counted for the report: what the original kept that has no meaning here. */
const COUNTED_TABLES = ['registered_hooks', 'intervention_participants', 'intervention_responses'] as const;

/** One SQL query returning plain rows; each driver answers `undefined` for a table it does not have. */
type Query = (table: string, sql: string) => Promise<Record<string, unknown>[] | undefined>;

const text = (value: unknown): string => (typeof value === 'string' ? value : value == null ? '' : String(value));

/** An instant from any of the shapes the original's drivers stored. */
export function parseOriginalTime(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  // `2026-03-01 08:00:00.123456789 -0500 EST` (Go's String), `…+01:00`, `…Z`, or no zone (UTC).
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?/i.exec(value.trim());
  if (!match) return undefined;
  const fraction = (match[3] ?? '').slice(0, 4);
  const zone = match[4] ? match[4].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2').toUpperCase() : 'Z';
  const date = new Date(`${match[1]}T${match[2]}${fraction}${zone}`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function jsonObject(value: unknown): Record<string, unknown> {
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  if (typeof value !== 'string' || value.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function readTables(source: string, query: Query): Promise<OriginalTables> {
  // Every column (`*`): versions before the demographic fields lack some; a missing one reads as empty.
  const participants = await query('conversation_participants', 'select * from conversation_participants order by id');
  if (participants === undefined) {
    throw new AppError(
      'invalid_input',
      `${source} is not an original PromptPipe database: it has no conversation_participants table`,
    );
  }
  const flowStates = (await query('flow_states', 'select * from flow_states')) ?? [];
  const jobs = (await query('jobs', 'select * from jobs')) ?? [];
  const receipts = (await query('receipts', 'select * from receipts order by id')) ?? [];
  const responses = (await query('responses', 'select * from responses order by id')) ?? [];
  const otherCounts: Record<string, number> = {};
  for (const table of COUNTED_TABLES) {
    const [row] = (await query(table, `select count(*) as count from ${table}`)) ?? [];
    if (row && Number(row['count']) > 0) otherCounts[table] = Number(row['count']);
  }
  const [queued] =
    (await query('outbox_messages', "select count(*) as count from outbox_messages where status = 'queued'")) ?? [];
  if (queued && Number(queued['count']) > 0) otherCounts['outbox_messages'] = Number(queued['count']);
  return {
    source,
    participants: participants.map((row) => ({
      id: text(row['id']),
      phoneNumber: text(row['phone_number']),
      name: text(row['name']),
      gender: text(row['gender']),
      ethnicity: text(row['ethnicity']),
      background: text(row['background']),
      status: text(row['status']),
      enrolledAt: parseOriginalTime(row['enrolled_at']),
      createdAt: parseOriginalTime(row['created_at']),
      updatedAt: parseOriginalTime(row['updated_at']),
    })),
    flowStates: flowStates.map((row) => ({
      participantId: text(row['participant_id']),
      flowType: text(row['flow_type']),
      currentState: text(row['current_state']),
      stateData: jsonObject(row['state_data']),
    })),
    jobs: jobs.map((row) => ({
      id: text(row['id']),
      kind: text(row['kind']),
      runAt: parseOriginalTime(row['run_at']),
      payload: jsonObject(row['payload_json']),
      status: text(row['status']),
    })),
    receipts: receipts.map((row) => ({
      id: Number(row['id']),
      recipient: text(row['recipient']),
      status: text(row['status']),
      time: Number(row['time']),
    })),
    responses: responses.map((row) => ({
      id: Number(row['id']),
      sender: text(row['sender']),
      body: text(row['body']),
      time: Number(row['time']),
    })),
    otherCounts,
  };
}

/** `file:/var/lib/promptpipe/state.db?_foreign_keys=on` or a plain path → the path. */
export function sqlitePathOf(dsn: string): string {
  return dsn.replace(/^file:(\/\/)?/, '').replace(/\?.*$/, '');
}

async function readSqlite(dsn: string): Promise<OriginalTables> {
  const { default: SqliteDatabase } = await import('better-sqlite3');
  const path = sqlitePathOf(dsn);
  let db: InstanceType<typeof SqliteDatabase>;
  try {
    db = new SqliteDatabase(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new AppError('invalid_input', `cannot open the SQLite file ${path}: ${errorMessage(error)}`);
  }
  try {
    const exists = db.prepare("select 1 from sqlite_master where type = 'table' and name = ?");
    return await readTables(path, async (table, sql) =>
      exists.get(table) ? (db.prepare(sql).all() as Record<string, unknown>[]) : undefined,
    );
  } finally {
    db.close();
  }
}

async function readPostgres(dsn: string): Promise<OriginalTables> {
  const { default: pg } = await import('pg');
  const TIMESTAMP_WITHOUT_ZONE = 1114;
  const client = new pg.Client({
    connectionString: dsn,
    // Kept as text and read as UTC: node-pg would read it in this machine's zone.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === TIMESTAMP_WITHOUT_ZONE ? (value: string) => value : pg.types.getTypeParser(oid, format)) as never,
    },
  });
  try {
    await client.connect();
  } catch (error) {
    throw new AppError('invalid_input', `cannot connect to the original's PostgreSQL database: ${errorMessage(error)}`);
  }
  try {
    await client.query('begin transaction read only');
    return await readTables('the PostgreSQL database', async (table, sql) => {
      const { rows } = await client.query<{ found: boolean }>('select to_regclass($1) is not null as found', [table]);
      if (!rows[0]?.found) return undefined;
      return (await client.query(sql)).rows as Record<string, unknown>[];
    });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Reads the original's database named by `from`: a PostgreSQL DSN, or a SQLite file (path or `file:` DSN). */
export function readOriginalDatabase(from: string): Promise<OriginalTables> {
  return /^postgres(ql)?:\/\//i.test(from.trim()) ? readPostgres(from.trim()) : readSqlite(from.trim());
}
