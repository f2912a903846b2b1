/**
 * The export's vocabulary: a table is a name, its documented columns and a row generator that walks the store in
 * keyset pages (never a whole table in memory).
 */
import type { Store } from '../../store/store.ts';
import type { Pseudonymizer } from './pseudonymizer.ts';

export const EXPORT_TABLES = [
  'participants',
  'messages',
  'events',
  'jobs',
  'daily_outcomes',
  'allocations',
  'decisions',
  'audit',
  'ratings',
] as const;
export type ExportTableName = (typeof EXPORT_TABLES)[number];

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export type ColumnType = 'string' | 'integer' | 'number' | 'boolean' | 'timestamp' | 'date' | 'json';

export interface ExportColumn {
  name: string;
  type: ColumnType;
  description: string;
}

export type ExportValue = string | number | boolean | null | Record<string, unknown> | unknown[];
export type ExportRow = Record<string, ExportValue>;

export interface ExportFilter {
  /** Only these participants (empty: everyone). */
  participantIds: readonly string[];
  /** Only rows from this instant on (participants: enrolled from then on). */
  since: Date | undefined;
}

export interface ExportContext {
  store: Store;
  filter: ExportFilter;
  /** Present with `--pseudonymize`. */
  pseudonymizer: Pseudonymizer | undefined;
  /** The configured channel's name: the channel of participants that have none of their own. */
  defaultChannel: string;
}

export interface ExportTable {
  name: ExportTableName;
  description: string;
  columns: readonly ExportColumn[];
  rows(context: ExportContext): AsyncGenerator<ExportRow>;
}

/** Rows read per database round trip. */
export const EXPORT_PAGE_SIZE = 500;
