/**
 * CSV exports neutralise what a spreadsheet would run as a formula (a leading `'`), only in text cells and only in CSV:
 * numbers, a cell that is only a number, timestamps and JSON Lines stay exact. The codebook says so.
 */
import { text } from 'node:stream/consumers';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { renderCodebook } from '../../src/research/export/codebook.ts';
import type { ExportContext, ExportRow, ExportTable } from '../../src/research/export/export-types.ts';
import { tableStream } from '../../src/research/export/table-stream.ts';

const ROWS: ExportRow[] = [
  { id: 1, text: '=HYPERLINK("http://x","y")', amount: -3, at: '2026-03-02T14:00:00.000Z', data: { a: '=1' } },
  { id: 2, text: '@SUM(1)', amount: -0.5, at: '2026-03-02T14:00:00.000Z', data: null },
  { id: 3, text: '+cmd|" /C calc"!A0', amount: 0, at: null, data: ['-1'] },
  { id: 4, text: '-2+3+cmd|" /C calc"!A0', amount: 1, at: null, data: null },
  { id: 5, text: '\t=1+1', amount: 2, at: null, data: null },
  { id: 6, text: '\r=1+1', amount: 3, at: null, data: null },
  { id: 7, text: '=1+1', amount: 4, at: null, data: null },
  { id: 8, text: '-3', amount: 5, at: null, data: null },
  { id: 9, text: '+15551230011', amount: 6, at: null, data: null },
  { id: 10, text: 'a = b, and -c', amount: 7, at: null, data: null },
  { id: 11, text: '', amount: 8, at: null, data: null },
];

const table: ExportTable = {
  name: 'messages',
  description: 'test rows',
  columns: [
    { name: 'id', type: 'integer', description: 'id' },
    { name: 'text', type: 'string', description: 'free text' },
    { name: 'amount', type: 'number', description: 'a signed number' },
    { name: 'at', type: 'timestamp', description: 'a time' },
    { name: 'data', type: 'json', description: 'details' },
  ],
  async *rows() {
    yield* ROWS;
  },
};

const context = {} as ExportContext;

describe('CSV formula neutralisation', () => {
  it("prefixes text cells a spreadsheet would run with ', and nothing else", async () => {
    const csv = await text(tableStream(table, context, 'csv'));
    const records = parse(csv, { columns: true, relax_column_count: false }) as Record<string, string>[];
    expect(records.map((record) => record.text)).toEqual([
      `'=HYPERLINK("http://x","y")`,
      "'@SUM(1)",
      `'+cmd|" /C calc"!A0`,
      `'-2+3+cmd|" /C calc"!A0`,
      "'\t=1+1",
      "'\r=1+1",
      "'=1+1",
      '-3',
      '+15551230011',
      'a = b, and -c',
      '',
    ]);
    // Numbers (negative ones too), timestamps and JSON text are exact.
    expect(records.map((record) => record.amount)).toEqual(['-3', '-0.5', '0', '1', '2', '3', '4', '5', '6', '7', '8']);
    expect(records[0]?.at).toBe('2026-03-02T14:00:00.000Z');
    expect(records[0]?.data).toBe('{"a":"=1"}');
    expect(records[2]?.data).toBe('["-1"]');
  });

  it('leaves JSON Lines exact', async () => {
    const jsonl = await text(tableStream(table, context, 'jsonl'));
    const rows = jsonl
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ExportRow);
    expect(rows.map((row) => row.text)).toEqual(ROWS.map((row) => row.text));
    expect(rows.map((row) => row.amount)).toEqual(ROWS.map((row) => row.amount));
  });

  it('is explained in the codebook of a CSV export only', () => {
    const codebook = (format: 'csv' | 'jsonl') =>
      renderCodebook({
        format,
        filter: { participantIds: [], since: undefined },
        pseudonymized: false,
        exportedAt: new Date('2026-03-02T14:00:00Z'),
        version: '0.0.0',
      });
    expect(codebook('csv')).toContain("with a single quote before it (`'=1+1`)");
    expect(codebook('jsonl')).not.toContain('single quote');
  });
});
