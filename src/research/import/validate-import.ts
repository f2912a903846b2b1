/**
 * Validates every row of a bulk enrolment before anything is enrolled: per-row errors (row number, field, problem),
 * duplicates inside the file, and the numbers already enrolled (skipped, not errors, so a re-run is harmless).
 */
import { canonicalLanguageTag, unknownLanguageProblem } from '../../domain/language.ts';
import { toE164 } from '../../domain/phone.ts';
import { canonicalTimeZone } from '../../scheduling/schedule-time.ts';
import { IMPORT_COLUMNS, type ImportRow } from './import-input.ts';

export interface ImportRowError {
  row: number;
  field: string;
  problem: string;
}

export interface ValidImportRow {
  row: number;
  phoneNumber: string;
  name: string;
  gender: string;
  ethnicity: string;
  background: string;
  timezone: string;
  channel: string | undefined;
  /** Canonical BCP 47 tag; undefined = the study's `DEFAULT_LANGUAGE`. */
  language: string | undefined;
  /** The row's other columns (those a stratified trial design names), trimmed: its stratum's `import.<column>`. */
  importColumns: Record<string, string>;
}

export interface SkippedImportRow {
  row: number;
  phoneNumber: string;
  participantId: string;
  reason: string;
}

export interface ImportValidation {
  valid: ValidImportRow[];
  skipped: SkippedImportRow[];
  errors: ImportRowError[];
}

export interface ImportValidationOptions {
  defaultCountry: string;
  /** The channels a participant can be enrolled on. */
  channels: readonly string[];
  /** The participant already holding this E.164 number, if any. */
  findEnrolled(phoneNumber: string): Promise<{ id: string } | undefined>;
}

export async function validateImport(
  rows: readonly ImportRow[],
  options: ImportValidationOptions,
): Promise<ImportValidation> {
  const valid: ValidImportRow[] = [];
  const skipped: SkippedImportRow[] = [];
  const errors: ImportRowError[] = [];
  const firstRowOf = new Map<string, number>();

  for (const { row, fields } of rows) {
    const rowErrors: ImportRowError[] = [];
    const rawPhone = fields.phone_number?.trim() ?? '';
    let phoneNumber = '';
    if (rawPhone === '') {
      rowErrors.push({ row, field: 'phone_number', problem: 'is required' });
    } else {
      try {
        phoneNumber = toE164(rawPhone, options.defaultCountry);
      } catch {
        rowErrors.push({ row, field: 'phone_number', problem: `"${rawPhone}" is not a valid phone number` });
      }
    }
    const rawZone = fields.timezone?.trim() ?? '';
    const timezone = rawZone === '' ? '' : canonicalTimeZone(rawZone);
    if (timezone === undefined) {
      rowErrors.push({
        row,
        field: 'timezone',
        problem: `"${rawZone}" is not an IANA time zone such as America/New_York`,
      });
    }
    const channel = fields.channel?.trim() || undefined;
    if (channel !== undefined && !options.channels.includes(channel)) {
      rowErrors.push({
        row,
        field: 'channel',
        problem: `unknown channel "${channel}" (known: ${options.channels.join(', ')})`,
      });
    }
    const rawLanguage = fields.language?.trim() ?? '';
    const language = rawLanguage === '' ? undefined : canonicalLanguageTag(rawLanguage);
    if (rawLanguage !== '' && language === undefined) {
      rowErrors.push({
        row,
        field: 'language',
        problem: unknownLanguageProblem(rawLanguage),
      });
    }
    if (phoneNumber) {
      const first = firstRowOf.get(phoneNumber);
      if (first !== undefined) {
        rowErrors.push({ row, field: 'phone_number', problem: `${phoneNumber} duplicates row ${first} of this file` });
      } else {
        firstRowOf.set(phoneNumber, row);
      }
    }
    if (rowErrors.length > 0) {
      errors.push(...rowErrors);
      continue;
    }
    const existing = await options.findEnrolled(phoneNumber);
    if (existing) {
      skipped.push({ row, phoneNumber, participantId: existing.id, reason: 'already enrolled' });
      continue;
    }
    valid.push({
      row,
      phoneNumber,
      name: fields.name?.trim() ?? '',
      gender: fields.gender?.trim() ?? '',
      ethnicity: fields.ethnicity?.trim() ?? '',
      background: fields.background?.trim() ?? '',
      timezone: timezone ?? '',
      channel,
      language,
      importColumns: Object.fromEntries(
        Object.entries(fields)
          .filter(([column]) => !(IMPORT_COLUMNS as readonly string[]).includes(column))
          .map(([column, value]) => [column, value?.trim() ?? '']),
      ),
    });
  }
  return { valid, skipped, errors };
}
