/**
 * Human ratings for the report's judge–human agreement from a file: the export's `ratings` table (CSV or JSON Lines,
 * from the dashboard's export page or `promptpipe export`) or hand-written JSON lines, one score of one conversation
 * (`eval:<run>:A/ada.1`, or a bare `A/ada.1`) on one criterion a row. Unusable rows are a clear error, never skipped;
 * which rows count for a run is human-agreement.ts's.
 */
import { readFileSync } from 'node:fs';
import { parse as parseCsv } from 'csv-parse/sync';
import { AppError } from '../domain/errors.ts';
import type { HumanScore } from '../research/ratings/human-agreement.ts';

function optionalText(value: unknown): string | undefined {
  const text = value === null || value === undefined ? '' : String(value).trim();
  return text === '' ? undefined : text;
}

function toScore(row: Record<string, unknown>, where: string): HumanScore {
  const conversation = String(row.conversation ?? '').trim();
  const criterion = String(row.criterion ?? '').trim();
  const score = Number(row.score);
  if (!conversation || !criterion || String(row.score ?? '').trim() === '' || !Number.isInteger(score)) {
    throw new AppError('invalid_input', `--ratings: ${where} needs conversation, criterion and an integer score`);
  }
  // A coach turn: the export's eval_line (an evaluation conversation) or transcript_entry_id (a study one).
  const turnText = optionalText(row.eval_line) ?? optionalText(row.transcript_entry_id);
  const turn = turnText === undefined ? undefined : Number(turnText);
  if (turn !== undefined && !Number.isInteger(turn)) {
    throw new AppError('invalid_input', `--ratings: ${where} has a coach turn that is not a whole number`);
  }
  return { conversation, criterion, score, rater: optionalText(row.rater), turn };
}

/** The rows of `file`, in file order (the export's is oldest first). */
export function readHumanRatings(file: string): HumanScore[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new AppError('invalid_input', `--ratings: cannot read "${file}"`);
  }
  if (file.endsWith('.csv')) {
    let rows: Record<string, unknown>[];
    try {
      rows = parseCsv(text, { columns: true, skip_empty_lines: true, trim: true }) as Record<string, unknown>[];
    } catch (error) {
      throw new AppError('invalid_input', `--ratings: "${file}" is not valid CSV (${(error as Error).message})`);
    }
    return rows.map((row, index) => toScore(row, `row ${index + 2}`));
  }
  return text
    .split('\n')
    .map((line, index) => ({ line: line.trim(), index }))
    .filter(({ line }) => line !== '')
    .map(({ line, index }) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new AppError('invalid_input', `--ratings: line ${index + 1} is not JSON`);
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new AppError('invalid_input', `--ratings: line ${index + 1} is not a JSON object`);
      }
      return toScore(value as Record<string, unknown>, `line ${index + 1}`);
    });
}
