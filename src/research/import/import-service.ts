/**
 * Bulk enrolment (`promptpipe participants import`, `POST /conversation/participants/import`): validate every row,
 * then (unless a row is invalid and `partial` is off, or `dryRun`) enroll the valid rows without greeting them and
 * queue their greetings at the configured pace.
 */

import type { Clock } from '../../domain/clock.ts';
import { AppError, errorMessage } from '../../domain/errors.ts';
import type { NewId } from '../../domain/ids.ts';
import type { ParticipantService } from '../../participants/participant-service.ts';
import type { Store } from '../../store/store.ts';
import { ENROLL_GREETING_JOB, enqueueGreetings, pacedAt } from './greeting-jobs.ts';
import type { ImportRow } from './import-input.ts';
import { type ImportRowError, validateImport } from './validate-import.ts';

export interface ImportOutcome {
  dryRun: boolean;
  partial: boolean;
  /** False when invalid rows stopped the import (nothing enrolled). */
  applied: boolean;
  totalRows: number;
  /** Valid rows: enrolled, or that would be enrolled in a dry run (`channel`: empty for the default one). */
  enrolled: { row: number; participantId: string | null; phoneNumber: string; channel: string }[];
  skipped: { row: number; phoneNumber: string; participantId: string; reason: string }[];
  errors: ImportRowError[];
  greetings: { queued: number; ratePerMinute: number; firstAt: string | null; lastAt: string | null };
}

export interface ImportService {
  /** The columns a row may have besides the enrolment ones: those the trial design stratifies on. */
  readonly extraColumns: readonly string[];
  run(
    rows: readonly ImportRow[],
    options: { partial?: boolean; dryRun?: boolean; onRow?: (done: number, total: number) => void },
  ): Promise<ImportOutcome>;
}

export function createImportService(options: {
  store: Store;
  participants: Pick<ParticipantService, 'enroll'>;
  clock: Clock;
  newId: NewId;
  defaultCountry: string;
  channels: readonly string[];
  greetingRatePerMinute: number;
  onJobEnqueued?: () => void;
  /** The columns a stratified trial design names as `import.<column>` (lower case); none by default. */
  extraColumns?: readonly string[];
}): ImportService {
  const { store, clock, newId } = options;
  const rate = options.greetingRatePerMinute;

  /** After the greetings already waiting, so two imports in a row keep the pace. */
  async function greetingStart(now: Date): Promise<Date> {
    const pending = await store.jobs.listPending({ kind: ENROLL_GREETING_JOB });
    const last = pending.at(-1)?.runAt;
    if (!last) return now;
    const next = pacedAt(last, 1, rate);
    return next > now ? next : now;
  }

  return {
    extraColumns: options.extraColumns ?? [],
    async run(rows, runOptions) {
      const partial = runOptions.partial ?? false;
      const dryRun = runOptions.dryRun ?? false;
      const validation = await validateImport(rows, {
        defaultCountry: options.defaultCountry,
        channels: options.channels,
        findEnrolled: (phoneNumber) => store.participants.getByPhone(phoneNumber),
      });
      const outcome: ImportOutcome = {
        dryRun,
        partial,
        applied: false,
        totalRows: rows.length,
        enrolled: [],
        skipped: validation.skipped,
        errors: validation.errors,
        greetings: { queued: 0, ratePerMinute: rate, firstAt: null, lastAt: null },
      };
      const blocked = validation.errors.length > 0 && !partial;
      if (blocked) return outcome;
      if (dryRun) {
        outcome.enrolled = validation.valid.map((row) => ({
          row: row.row,
          participantId: null,
          phoneNumber: row.phoneNumber,
          channel: row.channel ?? '',
        }));
        return outcome;
      }
      const ids: string[] = [];
      let done = 0;
      for (const row of validation.valid) {
        try {
          const participant = await options.participants.enroll(
            {
              phoneNumber: row.phoneNumber,
              name: row.name,
              gender: row.gender,
              ethnicity: row.ethnicity,
              background: row.background,
              timezone: row.timezone,
              ...(row.channel === undefined ? {} : { channel: row.channel }),
              ...(row.language === undefined ? {} : { language: row.language }),
              importColumns: row.importColumns,
            },
            { greet: false, source: 'import' },
          );
          ids.push(participant.id);
          outcome.enrolled.push({
            row: row.row,
            participantId: participant.id,
            phoneNumber: participant.phoneNumber,
            channel: participant.channel,
          });
        } catch (error) {
          // Enrolled meanwhile by someone else (the unique phone index): skipped, like a re-run.
          if (error instanceof AppError && error.code === 'conflict') {
            const existing = await store.participants.getByPhone(row.phoneNumber);
            outcome.skipped.push({
              row: row.row,
              phoneNumber: row.phoneNumber,
              participantId: existing?.id ?? '',
              reason: 'already enrolled',
            });
          } else {
            outcome.errors.push({ row: row.row, field: 'row', problem: `enrolment failed: ${errorMessage(error)}` });
          }
        }
        done += 1;
        runOptions.onRow?.(done, validation.valid.length);
      }
      outcome.applied = true;
      if (ids.length > 0) {
        const now = clock.now();
        const start = await greetingStart(now);
        await store.transaction((tx) => enqueueGreetings(tx.jobs, ids, { now: start, ratePerMinute: rate, newId }));
        options.onJobEnqueued?.();
        outcome.greetings = {
          queued: ids.length,
          ratePerMinute: rate,
          firstAt: start.toISOString(),
          lastAt: pacedAt(start, ids.length - 1, rate).toISOString(),
        };
      }
      outcome.skipped.sort((a, b) => a.row - b.row);
      return outcome;
    },
  };
}

/**
 * The JSON both the API and the CLI print; `chatUrls` (participant id → link) adds `chat_url` to the enrolled rows of
 * web-chat participants.
 */
export function importOutcomeJson(
  outcome: ImportOutcome,
  chatUrls: ReadonlyMap<string, string> = new Map(),
): Record<string, unknown> {
  return {
    dry_run: outcome.dryRun,
    partial: outcome.partial,
    applied: outcome.applied,
    total_rows: outcome.totalRows,
    enrolled: outcome.enrolled.map((row) => ({
      row: row.row,
      participant_id: row.participantId,
      phone_number: row.phoneNumber,
      ...(row.participantId && chatUrls.has(row.participantId) ? { chat_url: chatUrls.get(row.participantId) } : {}),
    })),
    skipped: outcome.skipped.map((row) => ({
      row: row.row,
      phone_number: row.phoneNumber,
      participant_id: row.participantId,
      reason: row.reason,
    })),
    errors: outcome.errors,
    greetings: {
      queued: outcome.greetings.queued,
      rate_per_minute: outcome.greetings.ratePerMinute,
      first_at: outcome.greetings.firstAt,
      last_at: outcome.greetings.lastAt,
    },
  };
}

/** One line: "3 enrolled, 1 skipped (already enrolled), 2 errors". */
export function importSummary(outcome: ImportOutcome): string {
  const verb = outcome.dryRun ? 'would be enrolled' : 'enrolled';
  const parts = [`${outcome.enrolled.length} ${verb}`, `${outcome.skipped.length} skipped (already enrolled)`];
  if (outcome.errors.length > 0) parts.push(`${outcome.errors.length} error(s)`);
  const prefix =
    !outcome.applied && outcome.errors.length > 0 && !outcome.dryRun
      ? 'nothing enrolled: fix the rows below or use partial import; '
      : outcome.dryRun && outcome.errors.length > 0 && !outcome.partial
        ? 'dry run: nothing would be enrolled while rows are invalid; '
        : '';
  return `${prefix}${parts.join(', ')}`;
}
