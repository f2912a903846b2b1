/**
 * The study's settings: the conversation, the schedule and its timers, languages, the trial design file, research
 * data (pseudonyms, paced greetings and broadcasts) and the original PromptPipe's default schedule.
 */
import { canonicalLanguageTag } from '../domain/language.ts';
import { type OriginalSchedule, parseCronSchedule } from '../domain/original-schedule.ts';
import type { ConfigReader } from './reader.ts';

export interface StudySettings {
  conversation: { chatHistoryLimit: number; debug: boolean; autoEnrollNewUsers: boolean; defaultCountry: string };
  scheduling: {
    clock: 'system' | 'manual';
    /** Start instant of the manual clock (defaults to the real time at start-up). */
    clockStart: Date | undefined;
    prepTimeMinutes: number;
    dailyPromptReminderDelayMs: number;
    autoFeedbackAfterPromptEnabled: boolean;
    feedbackInitialTimeoutMs: number;
    feedbackFollowupDelayMs: number;
    idleAfterUnanswered: number;
    idlePausesPrompts: boolean;
    missedPromptGraceMs: number;
  };
  /** Research data (issue 8): export pseudonyms, paced greetings and broadcasts. */
  research: {
    /** `EXPORT_PSEUDONYM_KEY`: HMAC key of `export --pseudonymize`; required with that flag. */
    exportPseudonymKey: string | undefined;
    /** `ENROLL_GREETING_RATE`: greetings of a bulk import sent per minute. */
    enrollGreetingRate: number;
    /** `BROADCAST_RATE`: broadcast messages sent per minute. */
    broadcastRate: number;
    /** `EVAL_REPORTS_DIR`: where the dashboard finds `promptpipe eval` runs to rate (default `eval-report`). */
    evalReportsDir: string;
  };
  /** `DEFAULT_LANGUAGE` (canonical BCP 47 tag) and `MESSAGE_CATALOGUE_DIR` (a study's own catalogues). */
  language: { defaultLanguage: string; catalogueDir: string | undefined };
  /** `STUDY_DESIGN_FILE`: a randomised trial's design (YAML or JSON), validated at start-up; unset: one implicit arm. */
  study: { designFile: string | undefined };
  /** The original PromptPipe's API (docs/api.md): `DEFAULT_SCHEDULE`, for `POST /schedule` without a schedule. */
  originalApi: { defaultSchedule: OriginalSchedule | undefined };
}

export function readStudySettings(read: ConfigReader): StudySettings {
  const clockStartText = read.string('PROMPTPIPE_CLOCK_START');
  const clockStart = clockStartText ? new Date(clockStartText) : undefined;
  if (clockStart && Number.isNaN(clockStart.getTime())) {
    read.problems.push(`PROMPTPIPE_CLOCK_START must be an ISO time (got "${clockStartText}")`);
  }
  const defaultCountry = (read.string('DEFAULT_COUNTRY') ?? 'US').toUpperCase();
  if (!/^[A-Z]{2}$/.test(defaultCountry)) {
    read.problems.push(`DEFAULT_COUNTRY must be a two-letter country code (got "${defaultCountry}")`);
  }
  const defaultLanguageText = read.string('DEFAULT_LANGUAGE') ?? 'en';
  const defaultLanguage = canonicalLanguageTag(defaultLanguageText);
  if (!defaultLanguage) {
    read.problems.push(
      `DEFAULT_LANGUAGE must be a BCP 47 language tag such as en, es or pt-BR (got "${defaultLanguageText}")`,
    );
  }
  return {
    conversation: {
      chatHistoryLimit: read.number(
        'CHAT_HISTORY_LIMIT',
        -1,
        (n) => Number.isInteger(n) && n >= -1,
        'an integer >= -1',
      ),
      debug: read.boolean('PROMPTPIPE_DEBUG', false),
      autoEnrollNewUsers: read.boolean('AUTO_ENROLL_NEW_USERS', false),
      defaultCountry,
    },
    scheduling: {
      clock: read.oneOf('PROMPTPIPE_CLOCK', ['system', 'manual'] as const, 'system'),
      clockStart,
      prepTimeMinutes: read.number(
        'SCHEDULER_PREP_TIME_MINUTES',
        10,
        (n) => Number.isInteger(n) && n >= 0,
        'a non-negative integer',
      ),
      dailyPromptReminderDelayMs: read.duration('DAILY_PROMPT_REMINDER_DELAY', '5h'),
      autoFeedbackAfterPromptEnabled: read.boolean('AUTO_FEEDBACK_AFTER_PROMPT_ENABLED', true),
      feedbackInitialTimeoutMs: read.duration('FEEDBACK_INITIAL_TIMEOUT', '15m'),
      feedbackFollowupDelayMs: read.duration('FEEDBACK_FOLLOWUP_DELAY', '3h'),
      idleAfterUnanswered: read.number(
        'IDLE_AFTER_UNANSWERED',
        3,
        (n) => Number.isInteger(n) && n >= 0,
        'a non-negative integer',
      ),
      idlePausesPrompts: read.boolean('IDLE_PAUSES_PROMPTS', false),
      missedPromptGraceMs: read.duration('MISSED_PROMPT_GRACE', '60m'),
    },
    research: {
      exportPseudonymKey: read.string('EXPORT_PSEUDONYM_KEY'),
      enrollGreetingRate: read.number('ENROLL_GREETING_RATE', 30, (n) => n > 0, 'a positive number (per minute)'),
      broadcastRate: read.number('BROADCAST_RATE', 30, (n) => n > 0, 'a positive number (per minute)'),
      evalReportsDir: read.string('EVAL_REPORTS_DIR') ?? 'eval-report',
    },
    language: { defaultLanguage: defaultLanguage ?? 'en', catalogueDir: read.string('MESSAGE_CATALOGUE_DIR') },
    study: { designFile: read.string('STUDY_DESIGN_FILE') },
    originalApi: { defaultSchedule: readDefaultSchedule(read) },
  };
}

/** `DEFAULT_SCHEDULE`: five cron-like fields, `minute hour day month weekday` (UTC), as in the original. */
function readDefaultSchedule(read: ConfigReader): OriginalSchedule | undefined {
  const text = read.string('DEFAULT_SCHEDULE');
  if (text === undefined) return undefined;
  const parsed = parseCronSchedule(text);
  if ('problem' in parsed) read.problems.push(`DEFAULT_SCHEDULE ${parsed.problem}`);
  return 'schedule' in parsed ? parsed.schedule : undefined;
}
