/**
 * A table as a byte stream, CSV (RFC 4180 via csv-stringify, header row first) or JSON Lines (one object per line).
 * Rows are pulled from the table's generator only as fast as the consumer reads, so memory stays constant.
 */
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { ExportContext, ExportFormat, ExportRow, ExportTable, ExportValue } from './export-types.ts';

/** How a value reads in a CSV cell: empty for null, JSON text for objects, `true`/`false` for booleans. */
export function csvCell(value: ExportValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

async function* csvLines(table: ExportTable, rows: AsyncIterable<ExportRow>): AsyncGenerator<string> {
  const names = table.columns.map((column) => column.name);
  yield stringify([names]);
  for await (const row of rows) yield stringify([names.map((name) => csvCell(row[name]))]);
}

async function* jsonLines(table: ExportTable, rows: AsyncIterable<ExportRow>): AsyncGenerator<string> {
  for await (const row of rows) {
    const ordered: ExportRow = {};
    for (const column of table.columns) ordered[column.name] = row[column.name] ?? null;
    yield `${JSON.stringify(ordered)}\n`;
  }
}

async function* counted(rows: AsyncIterable<ExportRow>, onRow: (() => void) | undefined): AsyncGenerator<ExportRow> {
  for await (const row of rows) {
    onRow?.();
    yield row;
  }
}

export function tableStream(
  table: ExportTable,
  context: ExportContext,
  format: ExportFormat,
  onRow?: () => void,
): Readable {
  const rows = counted(table.rows(context), onRow);
  return Readable.from(format === 'csv' ? csvLines(table, rows) : jsonLines(table, rows), { objectMode: false });
}
