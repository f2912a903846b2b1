/**
 * The hot path's statements as plain SQL: one module per operation in this folder exports each statement's text for
 * both databases and a typed function that runs it (the way graphile-worker keeps `src/sql/*.ts`). Everything else
 * in the store is built with Kysely; these are the few statements a turn, a job or a daily prompt runs every time,
 * written once as SQL so that what runs is what one reads.
 *
 * Each statement is written for PostgreSQL with `$1`, `$2`, … and runs there as a NAMED prepared statement (parsed
 * and planned once per connection: see `namedStatementPool` in postgres/named-statements.ts). Its SQLite text is
 * derived by `sqlite()` (each `$n` becomes `+?`, the values are reordered to match) unless the module writes one of
 * its own, and it is prepared once per database (the statement cache, sqlite/statement-cache.ts) and run directly.
 *
 * Rules the texts follow (the EXPLAIN test, test/store/hot-statement-plans.test.ts, checks the plans they keep):
 * - A status or role that a partial index is restricted on is a literal in the text (`status = 'pending'`), never a
 *   parameter: a planner chooses a partial index only when the query's text implies the index's condition.
 * - On SQLite every parameter is `+?`, not `?`: SQLite's planner, checking partial indexes, reads a bare parameter's
 *   value and then compiles the statement again on every run (docs/benchmarks.md); a unary plus hides the value.
 * - On SQLite a LIMIT is a literal: `limit $n` is written in as a number when the statement runs (`sqlite()`).
 */
import { CompiledQuery, type Kysely, type QueryResult, SqliteAdapter } from 'kysely';
import { AppError } from '../../../domain/errors.ts';
import type { Database } from '../database.ts';

export interface SqliteText {
  readonly text: string;
  /** For each `+?` of the text in order, the index of the value it takes among the PostgreSQL statement's values. */
  readonly order: readonly number[];
  /** The values written into the text as a literal LIMIT (`limit $n` on PostgreSQL), by index; see `sqlite()`. */
  readonly limits: readonly number[];
}

export interface HotStatement {
  /** The name of the PostgreSQL prepared statement; unique among hot statements. */
  readonly name: string;
  /** Undefined: a statement of SQLite's own way to do an operation, never run on PostgreSQL. */
  readonly postgres: string | undefined;
  /** Undefined: PostgreSQL's own, never run on SQLite. */
  readonly sqlite: SqliteText | undefined;
}

/** Every hot statement by PostgreSQL text, so the PostgreSQL pool can prepare it by name (and tests can list them). */
const byPostgresText = new Map<string, HotStatement>();

const all: HotStatement[] = [];

/**
 * Declares a hot statement: its name, its PostgreSQL text and, where it differs by more than parameters, SQLite's
 * (written with `$n` as well, converted by `sqlite()`). Null for a text: the operation takes another path on that
 * database.
 */
export function hotStatement(
  name: string,
  postgres: string | null,
  sqliteText: string | null = postgres,
): HotStatement {
  if (all.some((other) => other.name === name)) throw new AppError('internal', `two hot statements are named ${name}`);
  const statement: HotStatement = {
    name,
    postgres: postgres === null ? undefined : fold(postgres),
    sqlite: sqliteText === null ? undefined : sqlite(fold(sqliteText)),
  };
  all.push(statement);
  if (statement.postgres !== undefined) byPostgresText.set(statement.postgres, statement);
  return statement;
}

/** Whitespace folded: the texts are written over several lines for reading, and sent as one. */
function fold(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const LIMIT_SLOT = /\blimit \{(\d+)\}/g;

/**
 * The SQLite form of a text written with `$n` parameters: `+?` each, and the values' order to bind them in. A
 * `limit $n` becomes a literal LIMIT, written in when the statement runs (one prepared statement per limit value):
 * given a bound LIMIT, SQLite planned the statement again on every run (docs/benchmarks.md).
 */
export function sqlite(text: string): SqliteText {
  const order: number[] = [];
  const limits: number[] = [];
  const converted = text
    .replace(/\blimit \$(\d+)/g, (_match, digits: string) => {
      limits.push(Number(digits) - 1);
      return `limit {${Number(digits) - 1}}`;
    })
    .replace(/\$(\d+)/g, (_match, digits: string) => {
      order.push(Number(digits) - 1);
      return '+?';
    });
  return { text: converted, order, limits };
}

/** A LIMIT written into SQL text: it must be what it claims to be. */
function limitLiteral(value: unknown): string {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new AppError('invalid_input', `a row limit must be a non-negative integer, not ${String(value)}`);
  }
  return String(value);
}

/**
 * Texts with their LIMIT filled in, by statement and limits: a hot statement runs with a handful of limits, so the
 * first few are kept (a caller's page size can take any value: past these the text is built each time).
 */
const KEPT_LIMIT_TEXTS = 16;
const withLimits = new WeakMap<SqliteText, Map<string, string>>();

/** The SQLite text with its LIMIT slots filled from `values`. */
export function sqliteTextFor(statement: SqliteText, values: readonly unknown[]): string {
  if (statement.limits.length === 0) return statement.text;
  const key = statement.limits.map((index) => limitLiteral(values[index])).join(',');
  let texts = withLimits.get(statement);
  if (texts === undefined) {
    texts = new Map();
    withLimits.set(statement, texts);
  }
  let text = texts.get(key);
  if (text === undefined) {
    text = statement.text.replace(
      LIMIT_SLOT,
      (_match, index: string) => `limit ${limitLiteral(values[Number(index)])}`,
    );
    if (texts.size < KEPT_LIMIT_TEXTS) texts.set(key, text);
  }
  return text;
}

/** The hot statement whose PostgreSQL text this is, if any (the PostgreSQL pool names these). */
export function hotStatementFor(postgresText: string): HotStatement | undefined {
  return byPostgresText.get(postgresText);
}

/** Every hot statement declared so far (the modules declare theirs when imported). */
export function allHotStatements(): readonly HotStatement[] {
  return [...all];
}

/**
 * Runs a SQLite statement at once, without Kysely's executor (its connection mutex, connection provider and promise
 * chain cost more than a prepared SQLite statement's own run), when the store can do it safely; undefined when it
 * cannot now, and the statement goes through Kysely. `inTransaction`: the caller holds an open transaction.
 */
export type DirectRunner = (
  sqlText: string,
  parameters: readonly unknown[],
  inTransaction: boolean,
) => QueryResult<unknown> | undefined;

/** Direct runners by dialect adapter: a database and its transactions share one. */
const directRunners = new WeakMap<object, DirectRunner>();

/** Lets every hot statement on `db` and its transactions run through `runner` (SQLite, see sqlite-store.ts). */
export function runHotStatementsDirectly(db: Kysely<Database>, runner: DirectRunner): void {
  directRunners.set(db.getExecutor().adapter, runner);
}

/**
 * Runs `statement` on `db` (the database or an open transaction) with `values` in the PostgreSQL text's `$n` order.
 */
export function runHot<Row>(
  db: Kysely<Database>,
  statement: HotStatement,
  values: readonly unknown[],
): Promise<QueryResult<Row>> {
  const adapter = db.getExecutor().adapter;
  const onSqlite = adapter instanceof SqliteAdapter;
  const forDatabase = onSqlite ? statement.sqlite : statement.postgres;
  if (forDatabase === undefined) {
    return Promise.reject(
      new AppError('internal', `${statement.name} is not run on ${onSqlite ? 'SQLite' : 'PostgreSQL'}`),
    );
  }
  if (typeof forDatabase === 'string') return db.executeQuery<Row>(CompiledQuery.raw(forDatabase, [...values]));
  let text: string;
  try {
    text = sqliteTextFor(forDatabase, values);
  } catch (error) {
    return Promise.reject(error);
  }
  const parameters = forDatabase.order.map((index) => values[index] ?? null);
  const direct = directRunners.get(adapter);
  if (direct !== undefined) {
    try {
      const result = direct(text, parameters, db.isTransaction);
      if (result !== undefined) return Promise.resolve(result as QueryResult<Row>);
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return db.executeQuery<Row>(CompiledQuery.raw(text, parameters));
}

/** The first row of a statement that always returns one (an INSERT … RETURNING). */
export function firstRow<Row>(rows: readonly Row[]): Row {
  const [row] = rows;
  if (row === undefined) throw new AppError('internal', 'a statement expected to return a row returned none');
  return row;
}
