/** Parses the export options shared by the CLI and the HTTP routes. */
import { AppError } from '../../domain/errors.ts';
import { EXPORT_FORMATS, type ExportFilter, type ExportFormat } from './export-types.ts';

/** `2026-03-01` (UTC midnight) or any ISO 8601 instant. */
export function parseSince(value: string | undefined): Date | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00.000Z`) : new Date(text);
  if (Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
    throw new AppError('invalid_input', `since "${value}" is not a date (YYYY-MM-DD) or an ISO 8601 time`);
  }
  return date;
}

export function parseFormat(value: string | undefined): ExportFormat {
  const format = value ?? 'csv';
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new AppError('invalid_input', `format "${format}" is not one of ${EXPORT_FORMATS.join(', ')}`);
  }
  return format as ExportFormat;
}

export function exportFilter(options: {
  participants?: readonly string[] | undefined;
  since?: string | undefined;
}): ExportFilter {
  const participantIds = (options.participants ?? []).flatMap((value) =>
    value
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id !== ''),
  );
  return { participantIds, since: parseSince(options.since) };
}
