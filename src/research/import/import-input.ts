/**
 * Reads a bulk-enrolment file into rows: a CSV file (UTF-8, header row) or a JSON array of objects. Rejects, with a
 * clear message, what cannot be a participant list at all: non-UTF-8 bytes, an empty file, a missing
 * `phone_number` column or columns that are not enrolment fields, invalid CSV. Every message counts rows as the
 * validation does: row 1 is the first row after the header (a line number would differ as soon as a quoted field
 * spans lines or a line is empty).
 */
import { parse } from 'csv-parse/sync';
import { AppError, errorMessage } from '../../domain/errors.ts';

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
  /** The enrolment columns, and the extra columns the study design stratifies on (`import.<column>`). */
  fields: Partial<Record<ImportColumn, string>> & Record<string, string | undefined>;
}

/** What a reader accepts besides `IMPORT_COLUMNS`: the columns a stratified trial design names (lower case). */
export interface ImportReadOptions {
  extraColumns?: readonly string[];
}

/** What is wrong with the columns, or undefined. */
function columnsProblem(columns: readonly string[], extraColumns: readonly string[] = []): string | undefined {
  const known: readonly string[] = [...IMPORT_COLUMNS, ...extraColumns];
  const unknown = columns.filter((column) => !known.includes(column));
  const problems: string[] = [];
  if (unknown.length > 0) problems.push(`unknown column(s) ${unknown.map((c) => `"${c}"`).join(', ')}`);
  if (!columns.includes('phone_number')) problems.push('the phone_number column is missing');
  const duplicated = columns.filter((column, index) => columns.indexOf(column) !== index);
  if (duplicated.length > 0) problems.push(`column(s) repeated: ${[...new Set(duplicated)].join(', ')}`);
  return problems.length > 0
    ? `wrong columns: ${problems.join('; ')}. Expected columns: ${known.join(', ')}`
    : undefined;
}

function checkColumns(columns: readonly string[], extraColumns: readonly string[] = []): void {
  const problem = columnsProblem(columns, extraColumns);
  if (problem) throw new AppError('invalid_input', problem);
}

/** csv-parse's error codes in words a spreadsheet user can act on; others keep csv-parse's own text. */
const CSV_PROBLEMS: Readonly<Record<string, string>> = {
  CSV_INVALID_CLOSING_QUOTE: 'text after the closing quote of a field (a quote inside a quoted field is written "")',
  INVALID_OPENING_QUOTE: 'a quote inside a field that does not start with one (quote the whole field)',
  CSV_QUOTE_NOT_CLOSED: 'a quoted field is never closed',
  CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: 'not as many fields as the header has columns',
};

/**
 * A csv-parse error, located by row: csv-parse counts the records it read before the failing one (the header is the
 * first), which is the failing row's number among the rows after the header. Its own message counts lines.
 */
function csvProblem(error: unknown): string {
  const { code, records } = error as { code?: unknown; records?: unknown };
  const detail =
    (typeof code === 'string' ? CSV_PROBLEMS[code] : undefined) ??
    errorMessage(error).replace(/ (at|on) line \d+/g, '');
  const where = typeof records !== 'number' ? '' : records === 0 ? 'the header row: ' : `row ${records}: `;
  return `the file is not valid CSV: ${where}${detail}`;
}

const PARSE_OPTIONS = { skip_empty_lines: true, relax_column_count: false, trim: true } as const;

/** CSV bytes → rows. */
export function readCsvImport(bytes: Uint8Array, options: ImportReadOptions = {}): ImportRow[] {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new AppError('invalid_input', 'the file is not UTF-8 text: save it as CSV UTF-8 and try again');
  }
  text = text.replace(/^\uFEFF/, '');
  if (text.trim() === '')
    throw new AppError('invalid_input', 'the file is empty: expected a header row and participant rows');
  // The header first, on its own: wrong columns are reported even when a row further down is not valid CSV.
  let header: string[] | undefined;
  try {
    [header] = parse(text, { ...PARSE_OPTIONS, to: 1 }) as string[][];
  } catch (error) {
    throw new AppError('invalid_input', csvProblem(error));
  }
  if (!header) throw new AppError('invalid_input', 'the file is empty: expected a header row and participant rows');
  const columns = header.map((column) => column.trim().toLowerCase());
  const problems = [columnsProblem(columns, options.extraColumns)];
  let data: string[][] = [];
  try {
    data = (parse(text, PARSE_OPTIONS) as string[][]).slice(1);
  } catch (error) {
    problems.push(csvProblem(error));
  }
  const found = problems.filter((problem) => problem !== undefined);
  if (found.length > 0) throw new AppError('invalid_input', found.join('; and '));
  if (data.length === 0) throw new AppError('invalid_input', 'the file has a header row but no participant rows');
  return data.map((record, index) => ({
    row: index + 1,
    fields: Object.fromEntries(columns.map((column, position) => [column, record[position] ?? ''])),
  }));
}

/** A JSON array of objects → rows. */
export function readJsonImport(body: unknown, options: ImportReadOptions = {}): ImportRow[] {
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
  checkColumns([...columns], options.extraColumns);
  return rows;
}

/**
 * A body whose content type does not say what it is (none at all, or the generic ones HTTP clients default to): JSON
 * when it starts with `[` or `{` (after a byte order mark and spaces), else CSV.
 */
export function readUntypedImport(bytes: Uint8Array, options: ImportReadOptions = {}): ImportRow[] {
  const start = new TextDecoder('utf-8')
    .decode(bytes.subarray(0, 64))
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (!start.startsWith('[') && !start.startsWith('{')) return readCsvImport(bytes, options);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new AppError('invalid_input', `the body starts like JSON but is not valid JSON: ${errorMessage(error)}`);
  }
  return readJsonImport(body, options);
}
