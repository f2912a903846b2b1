/**
 * The column types the table files share (database.ts and the `*-tables.ts` files import them from here, so that the
 * table files need not import the database type that lists them).
 */
import type { ColumnType } from 'kysely';

/** Selected as `Date` (PostgreSQL) or ISO-8601 text (SQLite); written as ISO-8601 text. */
export type TimestampColumn = ColumnType<Date | string, string, string>;
export type NullableTimestampColumn = ColumnType<Date | string | null, string | null, string | null>;
/** Selected as parsed JSON (PostgreSQL `jsonb`) or JSON text (SQLite); written as JSON text. */
export type JsonColumn = ColumnType<unknown, string, string>;
export type NullableJsonColumn = ColumnType<unknown, string | null, string | null>;
