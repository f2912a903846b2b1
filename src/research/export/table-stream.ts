/**
 * A table as a byte stream, CSV (RFC 4180 via csv-stringify, header row first) or JSON Lines (one object per line).
 * Rows are pulled from the table's generator only as fast as the consumer reads, so memory stays constant.
 */
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { ExportContext, ExportFormat, ExportRow, ExportTable, ExportValue } from './export-types.ts';

/**
 * What a spreadsheet reads as a formula (OWASP, "CSV Injection"): a cell starting with `=`, `+`, `-`, `@`, a tab or a
 * carriage return. A participant's name or message such as `=HYPERLINK("http://…","…")` would otherwise run in the
 * researcher's spreadsheet.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A cell that is only a number (`-3`, `+15551230011`, `-0.5`) is evaluated as that number: it cannot call anything. */
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

/**
 * How a value reads in a CSV cell: empty for null, JSON text for objects, `true`/`false` for booleans, and text that
 * a spreadsheet would run as a formula prefixed with a single quote (`'=1+1`), which makes it plain text. Numbers are
 * never prefixed (a negative number stays a number); JSON Lines are not concerned (their values are exact).
 */
export function csvCell(value: ExportValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  const text = String(value);
  if (typeof value !== 'string' || !FORMULA_START.test(text) || PLAIN_NUMBER.test(text)) return text;
  return `'${text}`;
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
