/**
 * Reads a bulk-enrolment file into rows: a CSV file (UTF-8, header row) or a JSON array of objects. Rejects, with a
 * clear message, what cannot be a participant list at all: non-UTF-8 bytes, an empty file, a missing
 * `phone_number` column or columns that are not enrolment fields.
 */
import { parse } from 'csv-parse/sync';
import { AppError } from '../../domain/errors.ts';

export const IMPORT_COLUMNS = [
  'phone_number',
  'name',
  'gender',
  'ethnicity',
  'background',
  'timezone',
  'channel',
  'language',
] as const;
export type ImportColumn = (typeof IMPORT_COLUMNS)[number];

export interface ImportRow {
  /** 1 is the first data row (line 2 of a CSV file, element 0 of a JSON array). */
  row: number;
  fields: Partial<Record<ImportColumn, string>>;
}

function checkColumns(columns: readonly string[]): void {
  const unknown = columns.filter((column) => !(IMPORT_COLUMNS as readonly string[]).includes(column));
  const problems: string[] = [];
  if (unknown.length > 0) problems.push(`unknown column(s) ${unknown.map((c) => `"${c}"`).join(', ')}`);
  if (!columns.includes('phone_number')) problems.push('the phone_number column is missing');
  const duplicated = columns.filter((column, index) => columns.indexOf(column) !== index);
  if (duplicated.length > 0) problems.push(`column(s) repeated: ${[...new Set(duplicated)].join(', ')}`);
  if (problems.length > 0) {
    throw new AppError(
      'invalid_input',
      `wrong columns: ${problems.join('; ')}. Expected columns: ${IMPORT_COLUMNS.join(', ')}`,
    );
  }
}

/** CSV bytes → rows. */
export function readCsvImport(bytes: Uint8Array): ImportRow[] {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new AppError('invalid_input', 'the file is not UTF-8 text: save it as CSV UTF-8 and try again');
  }
  text = text.replace(/^\uFEFF/, '');
  if (text.trim() === '')
    throw new AppError('invalid_input', 'the file is empty: expected a header row and participant rows');
  let records: string[][];
  try {
    records = parse(text, { skip_empty_lines: true, relax_column_count: false, trim: true }) as string[][];
  } catch (error) {
    throw new AppError(
      'invalid_input',
      `the file is not valid CSV: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const [header, ...data] = records;
  if (!header) throw new AppError('invalid_input', 'the file is empty: expected a header row and participant rows');
  const columns = header.map((column) => column.trim().toLowerCase());
  checkColumns(columns);
  if (data.length === 0) throw new AppError('invalid_input', 'the file has a header row but no participant rows');
  return data.map((record, index) => ({
    row: index + 1,
    fields: Object.fromEntries(columns.map((column, position) => [column, record[position] ?? ''])),
  }));
}

/** A JSON array of objects → rows. */
export function readJsonImport(body: unknown): ImportRow[] {
  if (!Array.isArray(body))
    throw new AppError('invalid_input', 'expected a JSON array of participants or a text/csv body');
  if (body.length === 0) throw new AppError('invalid_input', 'the participant list is empty');
  const columns = new Set<string>();
  const rows = body.map((item, index) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new AppError('invalid_input', `row ${index + 1}: expected an object with the enrolment fields`);
    }
    const fields: Record<string, string> = {};
    for (const [key, value] of Object.entries(item)) {
      columns.add(key);
      fields[key] = value === null || value === undefined ? '' : String(value);
    }
    return { row: index + 1, fields };
  });
  checkColumns([...columns]);
  return rows;
}
