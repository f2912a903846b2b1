/**
 * Human ratings for the report's judge–human agreement: the dashboard's `ratings` export (CSV) or JSON lines, one
 * score of one conversation (`A/ada.1`) on one criterion a row. Unusable rows are a clear error, never skipped.
 */
import { readFileSync } from 'node:fs';
import { parse as parseCsv } from 'csv-parse/sync';
import { AppError } from '../domain/errors.ts';
import type { HumanRating } from './report-summary.ts';

function toRating(row: Record<string, unknown>, where: string): HumanRating {
  const conversation = String(row.conversation ?? '').trim();
  const criterion = String(row.criterion ?? '').trim();
  const score = Number(row.score);
  if (!conversation || !criterion || !Number.isInteger(score)) {
    throw new AppError('invalid_input', `--ratings: ${where} needs conversation, criterion and an integer score`);
  }
  return { conversation, criterion, score };
}

export function readHumanRatings(file: string): HumanRating[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new AppError('invalid_input', `--ratings: cannot read "${file}"`);
  }
  if (file.endsWith('.csv')) {
    const rows = parseCsv(text, { columns: true, skip_empty_lines: true, trim: true }) as Record<string, unknown>[];
    return rows.map((row, index) => toRating(row, `row ${index + 2}`));
  }
  return text
    .split('\n')
    .map((line, index) => ({ line: line.trim(), index }))
    .filter(({ line }) => line !== '')
    .map(({ line, index }) => {
      try {
        return toRating(JSON.parse(line) as Record<string, unknown>, `line ${index + 1}`);
      } catch (error) {
        if (error instanceof AppError) throw error;
        throw new AppError('invalid_input', `--ratings: line ${index + 1} is not JSON`);
      }
    });
}
