/**
 * Conversions between domain values and stored column values, shared by both dialects.
 *
 * Timestamps are written as `Date#toISOString()` (always 24 characters, UTC, millisecond precision) so that on SQLite,
 * where they are text, string order is time order and `<=` compares instants. PostgreSQL parses the same text into
 * `timestamptz` and hands back a `Date`.
 */

export function toTimestamp(date: Date): string {
  return date.toISOString();
}

export function toOptionalTimestamp(date: Date | undefined): string | null {
  return date === undefined ? null : date.toISOString();
}

export function fromTimestamp(value: Date | string): Date {
  return value instanceof Date ? new Date(value.getTime()) : new Date(value);
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
