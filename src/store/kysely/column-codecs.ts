/**
 * Conversions between domain values and stored column values, shared by both dialects.
 *
 * Timestamps are written as `Date#toISOString()` (always 24 characters, UTC, millisecond precision) so that on SQLite,
 * where they are text, string order is time order and `<=` compares instants. PostgreSQL parses the same text into
 * `timestamptz` and hands back a `Date`.
 */

/**
 * The last instant written and read: a transaction writes the same `now` into most of its rows, and a query reads
 * rows stamped in the same millisecond, so formatting and parsing (visible in a busy server's profile) mostly repeat.
 */
let lastWrittenTime = Number.NaN;
let lastWrittenText = '';
let lastReadText = '';
let lastReadTime = Number.NaN;

export function toTimestamp(date: Date): string {
  const time = date.getTime();
  // An invalid date (NaN) never matches, so `toISOString` throws for it as before.
  if (time !== lastWrittenTime) {
    lastWrittenText = date.toISOString();
    lastWrittenTime = time;
  }
  return lastWrittenText;
}

export function toOptionalTimestamp(date: Date | undefined): string | null {
  return date === undefined ? null : toTimestamp(date);
}

export function fromTimestamp(value: Date | string): Date {
  if (value instanceof Date) return new Date(value.getTime());
  if (value !== lastReadText) {
    lastReadTime = new Date(value).getTime();
    lastReadText = value;
  }
  return new Date(lastReadTime);
}

export function fromOptionalTimestamp(value: Date | string | null): Date | undefined {
  return value === null ? undefined : fromTimestamp(value);
}

export function toJson(value: unknown): string {
  return JSON.stringify(value);
}

export function toOptionalJson(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

/**
 * SQLite returns the JSON text, PostgreSQL (`jsonb`) the parsed value. Every JSON column holds an object or an array,
 * never a bare string, so a string can only be unparsed JSON text.
 */
export function fromJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

export function fromOptionalJson<T>(value: unknown): T | undefined {
  return value === null || value === undefined ? undefined : fromJson<T>(value);
}

/** Optional domain fields are absent (not `undefined`) when the column is NULL, for `exactOptionalPropertyTypes`. */
export function optionalField<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
