/**
 * The safety net's settings (read by config.ts through its reader): risk detection, the safety messages, and the alert
 * routes. Files named here are read and checked at start-up, so a broken keyword list or safety message file stops the
 * server instead of silently detecting nothing. The built-in keyword lists, messages and prompt are the safety net's
 * own (safety/safety-net.ts lays what is read here over them).
 */
import { readFileSync } from 'node:fs';
import { type LocalTime, parseLocalTime } from '../domain/local-time.ts';
import type { ConfigReader } from './reader.ts';

/**
 * `skip`: a flagged message gets the safety message only; `reply`: the coach answers it afterwards as well; `hold`:
 * the coach answers once staff have cleared the review (or not, if they discard the turn).
 */
export type CoachTurnOnFlag = 'skip' | 'reply' | 'hold';

/** `QUIET_HOURS`: a window of the participant's local day (scheduling/quiet-hours.ts). */
export interface QuietHoursWindow {
  start: LocalTime;
  end: LocalTime;
}

export interface SafetySettings {
  /** Phrases per language from `SAFETY_KEYWORDS_FILE`; each replaces the built-in list of its language. */
  keywords: Readonly<Record<string, readonly string[]>>;
  /** `SAFETY_MODEL_CHECK`: also ask a model about every message no keyword flagged. */
  modelCheck: boolean;
  /** `SAFETY_MODEL`: the model of that check (default: `GENAI_MODEL`), at the same OpenAI-compatible endpoint. */
  model: string | undefined;
  /** `SAFETY_PROMPT_FILE`'s text; the built-in prompt when unset. */
  prompt: string | undefined;
  /** `SAFETY_MODEL_THRESHOLD`: the model's score from which a message is flagged. */
  modelThreshold: number;
  /** Per language from `SAFETY_MESSAGES_FILE`; each replaces the built-in message of its language. */
  messages: Readonly<Record<string, string>>;
  /** `SAFETY_COACH_TURN`: `skip` (default), `reply`, or `hold` (until staff clear the review). */
  coachTurn: CoachTurnOnFlag;
  /** `SAFETY_REVIEW`: a flag puts the participant under staff review (no proactive messages until resolved). */
  review: boolean;
  /** `PAUSE_ANSWERS_MESSAGES`: a paused participant's own messages are answered by the coach (no proactive ones). */
  pauseAnswersMessages: boolean;
  /** `QUIET_HOURS` (`21:00-08:00`, participant's local time): proactive messages wait for the end (quiet-hours.ts). */
  quietHours: QuietHoursWindow | undefined;
  /** `ADHERENCE_MISSED_PROMPTS`, `ADHERENCE_SILENT_DAYS`, `ADHERENCE_CHECK_EVERY` (adherence-alerts.ts). */
  adherence: { missedPrompts: number | undefined; silentDays: number | undefined; checkEveryMs: number };
  /** `TAKEOVER_IDLE_AFTER`: a taken-over conversation without a staff message this long raises an alert. */
  takeoverIdleAfterMs: number;
  alerts: {
    /** `SMTP_URL`, e.g. `smtps://user:pass@smtp.example.org:465`. */
    smtpUrl: string | undefined;
    /** `ALERT_EMAIL_TO`: comma-separated addresses. */
    emailTo: readonly string[];
    /** `ALERT_EMAIL_FROM`. */
    emailFrom: string;
    /** `ALERT_WEBHOOK_URL`. */
    webhookUrl: string | undefined;
    /** `ALERT_WEBHOOK_SECRET`, else `PROMPTPIPE_WEBHOOK_SECRET`. */
    webhookSecret: string | undefined;
  };
}

/** A JSON object of language → T from a file, or a start-up problem. */
function readLanguageFile<T>(
  read: ConfigReader,
  name: string,
  check: (value: unknown) => value is T,
  expected: string,
): Record<string, T> {
  const path = read.string(name);
  if (path === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    read.problems.push(
      `${name}: ${path} could not be read as JSON (${error instanceof Error ? error.message : error})`,
    );
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    read.problems.push(`${name}: ${path} must hold a JSON object of language → ${expected}`);
    return {};
  }
  const result: Record<string, T> = {};
  for (const [language, value] of Object.entries(parsed)) {
    if (check(value)) result[language] = value;
    else read.problems.push(`${name}: "${language}" in ${path} must be ${expected}`);
  }
  return result;
}

const isPhraseList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((phrase) => typeof phrase === 'string' && /[\p{L}\p{N}]/u.test(phrase));
const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

function readPrompt(read: ConfigReader): string | undefined {
  const path = read.string('SAFETY_PROMPT_FILE');
  if (path === undefined) return undefined;
  try {
    const text = readFileSync(path, 'utf8').trim();
    if (text) return text;
    read.problems.push(`SAFETY_PROMPT_FILE: ${path} is empty`);
  } catch (error) {
    read.problems.push(
      `SAFETY_PROMPT_FILE: ${path} could not be read (${error instanceof Error ? error.message : error})`,
    );
  }
  return undefined;
}

/** A positive whole number, or undefined when unset (the rule is off). */
function optionalCount(read: ConfigReader, name: string): number | undefined {
  if (read.string(name) === undefined) return undefined;
  return read.number(name, 1, (n) => Number.isInteger(n) && n > 0, 'a positive whole number');
}

function readQuietHours(read: ConfigReader): QuietHoursWindow | undefined {
  const text = read.string('QUIET_HOURS');
  if (text === undefined) return undefined;
  const [startText, endText, ...rest] = text.split('-');
  const start = startText === undefined ? undefined : parseLocalTime(startText);
  const end = endText === undefined ? undefined : parseLocalTime(endText);
  if (!start || !end || rest.length > 0 || (start.hour === end.hour && start.minute === end.minute)) {
    read.problems.push(`QUIET_HOURS must be a window such as 21:00-08:00 (got "${text}")`);
    return undefined;
  }
  return { start, end };
}

export function readSafetySettings(read: ConfigReader): SafetySettings {
  const keywords = readLanguageFile(read, 'SAFETY_KEYWORDS_FILE', isPhraseList, 'a list of phrases');
  const messages = readLanguageFile(read, 'SAFETY_MESSAGES_FILE', isText, 'a non-empty text');
  const smtpUrl = read.string('SMTP_URL');
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl)) {
    read.problems.push('SMTP_URL must start with smtp:// or smtps:// (e.g. smtps://user:password@host:465)');
  }
  const emailTo = (read.string('ALERT_EMAIL_TO') ?? '')
    .split(',')
    .map((address) => address.trim())
    .filter((address) => address !== '');
  for (const address of emailTo) {
    if (!/^[^@\s]+@[^@\s]+$/.test(address)) read.problems.push(`ALERT_EMAIL_TO: "${address}" is not an e-mail address`);
  }
  if ((smtpUrl === undefined) !== (emailTo.length === 0)) {
    read.problems.push('SMTP_URL and ALERT_EMAIL_TO go together: set both to e-mail alerts, or neither');
  }
  const webhookUrl = read.string('ALERT_WEBHOOK_URL');
  if (webhookUrl !== undefined && !/^https?:\/\//.test(webhookUrl)) {
    read.problems.push(`ALERT_WEBHOOK_URL must be an http(s) URL (got "${webhookUrl}")`);
  }
  const coachTurn = read.oneOf('SAFETY_COACH_TURN', ['skip', 'reply', 'hold'] as const, 'skip');
  const review = read.boolean('SAFETY_REVIEW', true);
  if (coachTurn === 'hold' && !review) {
    read.problems.push('SAFETY_COACH_TURN=hold waits for staff to clear the review: it needs SAFETY_REVIEW=true');
  }
  return {
    keywords,
    modelCheck: read.boolean('SAFETY_MODEL_CHECK', false),
    model: read.string('SAFETY_MODEL'),
    prompt: readPrompt(read),
    modelThreshold: read.number('SAFETY_MODEL_THRESHOLD', 0.5, (n) => n > 0 && n <= 1, 'a number above 0, at most 1'),
    messages,
    coachTurn,
    review,
    quietHours: readQuietHours(read),
    pauseAnswersMessages: read.boolean('PAUSE_ANSWERS_MESSAGES', true),
    adherence: {
      missedPrompts: optionalCount(read, 'ADHERENCE_MISSED_PROMPTS'),
      silentDays: optionalCount(read, 'ADHERENCE_SILENT_DAYS'),
      checkEveryMs: read.duration('ADHERENCE_CHECK_EVERY', '1h'),
    },
    takeoverIdleAfterMs: read.duration('TAKEOVER_IDLE_AFTER', '30m'),
    alerts: {
      smtpUrl,
      emailTo,
      emailFrom: read.string('ALERT_EMAIL_FROM') ?? 'PromptPipe <promptpipe@localhost>',
      webhookUrl,
      webhookSecret: read.string('ALERT_WEBHOOK_SECRET') ?? read.string('PROMPTPIPE_WEBHOOK_SECRET'),
    },
  };
}
