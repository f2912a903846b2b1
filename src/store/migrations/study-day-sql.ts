import { type RawBuilder, sql } from 'kysely';

/**
 * The SQL expressions the study-day summary and the roster's indexes write out per database. An index on an
 * expression is only used by a query that repeats the expression, so the migration that creates the indexes and the
 * repositories that query them take the expressions from here. Column and key names are trusted constants.
 */
export interface StudyDaySql {
  /** A JSON object column's key as text (`null` when absent). */
  jsonText(column: string, key: string): RawBuilder<string | null>;
  /** The flow state's data key `key` (a string in `state_data`), as the roster's expression indexes hold it. */
  dataKey(column: string, key: string): RawBuilder<string | null>;
  /**
   * A name folded to lower case, compared in byte order (PostgreSQL's `C` collation; SQLite's default), so that a
   * prefix is the range [prefix, prefix + U+FFFF) whatever collation the database was created with.
   */
  foldedName(column: string): RawBuilder<string>;
  /** The UTC calendar date (`YYYY-MM-DD`) of a timestamp column. */
  utcDate(column: string): RawBuilder<string>;
  /** Whole seconds from one timestamp to another (null when either is null). */
  secondsBetween(from: string, to: string): RawBuilder<number | null>;
}

const SQLITE: StudyDaySql = {
  jsonText: (column, key) => sql.raw(`json_extract(${column}, '$.${key}')`),
  dataKey: (column, key) => sql.raw(`json_extract(${column}, '$.${key}')`),
  foldedName: (column) => sql.raw(`lower(${column})`),
  utcDate: (column) => sql.raw(`substr(${column}, 1, 10)`),
  secondsBetween: (from, to) => sql.raw(`cast(round((julianday(${to}) - julianday(${from})) * 86400) as integer)`),
};

const POSTGRES: StudyDaySql = {
  jsonText: (column, key) => sql.raw(`(${column} ->> '${key}')`),
  dataKey: (column, key) => sql.raw(`(${column} ->> '${key}')`),
  foldedName: (column) => sql.raw(`(lower(${column}) collate "C")`),
  utcDate: (column) => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD')`),
  secondsBetween: (from, to) => sql.raw(`cast(round(extract(epoch from (${to} - ${from}))) as integer)`),
};

export function studyDaySql(dialect: 'sqlite' | 'postgres'): StudyDaySql {
  return dialect === 'postgres' ? POSTGRES : SQLITE;
}
