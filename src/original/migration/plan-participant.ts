/**
 * One participant of the original PromptPipe as PromptPipe will hold it (pure): the participant (E.164 phone, the
 * original's id kept), its state data (profile with tone, sub-state, last prompt…; the same data keys), the stored
 * chat history, its daily schedule, the day the original already served, and its pending timers.
 *
 * What the state data held that is not carried over: the working history (imported as messages instead) and the
 * timer ids (the original's job ids; the timers that were pending are re-created and get new ones).
 */
import { CONTRACT_DATA_KEYS, DataKey, type StateData } from '../../domain/data-keys.ts';
import { errorMessage } from '../../domain/errors.ts';
import { type ConversationMessage, isConversationMessage } from '../../domain/history.ts';
import {
  formatParticipantBackground,
  PARTICIPANT_STATUSES,
  type Participant,
  type ParticipantStatus,
} from '../../domain/participant.ts';
import { toE164 } from '../../domain/phone.ts';
import { parseScheduleRegistry, type ScheduleInfo } from '../../scheduling/schedule-registry.ts';
import { canonicalTimeZone, localDateOf } from '../../scheduling/schedule-time.ts';
import { TIMER_ID_DATA_KEY, TimerJobKind } from '../../scheduling/timers/timer-jobs.ts';
import type { OriginalFlowStateRow, OriginalJobRow, OriginalParticipantRow } from './original-database.ts';

/** A timer the original had pending, as one of ours. */
export interface PlannedTimer {
  kind: TimerJobKind;
  runAt: Date;
  payload: Record<string, unknown>;
  originalJobId: string;
}

export interface PlannedParticipant {
  participant: Participant;
  stateData: StateData;
  /** The stored history, oldest first: transcript entries marked imported; the last 50 the working history. */
  history: ConversationMessage[];
  schedule: ScheduleInfo | undefined;
  /** The local date (schedule zone) whose daily prompt the original already sent: not sent again. */
  servedLocalDate: string | undefined;
  timers: PlannedTimer[];
  /** Lines for the report: what of this participant is not carried over. */
  notes: string[];
}

/** The original's job kinds and ours. */
const TIMER_KINDS: Readonly<Record<string, TimerJobKind>> = {
  state_transition: TimerJobKind.STATE_TRANSITION,
  feedback_timeout: TimerJobKind.FEEDBACK_TIMEOUT,
  feedback_followup: TimerJobKind.FEEDBACK_FOLLOWUP,
  daily_prompt_reminder: TimerJobKind.DAILY_PROMPT_REMINDER,
  auto_feedback_enforcement: TimerJobKind.AUTO_FEEDBACK,
};
/** A job still to run: queued, or running when the original stopped (it would have run it again). */
export const PENDING_ORIGINAL_JOB = new Set(['queued', 'running']);

export function isImportableTimer(job: OriginalJobRow): boolean {
  return TIMER_KINDS[job.kind] !== undefined;
}

const TIMER_ID_KEYS = new Set<string>(Object.values(TIMER_ID_DATA_KEY));

function stateDataOf(row: OriginalFlowStateRow | undefined, notes: string[]): StateData {
  const data: StateData = {};
  for (const [key, value] of Object.entries(row?.stateData ?? {})) {
    if (key === DataKey.conversationHistory || TIMER_ID_KEYS.has(key)) continue;
    if (!(CONTRACT_DATA_KEYS as readonly string[]).includes(key)) {
      notes.push(`state data key ${key} is not one PromptPipe knows; not imported`);
      continue;
    }
    if (typeof value === 'string' && value !== '') data[key as DataKey] = value;
  }
  return data;
}

function historyOf(row: OriginalFlowStateRow | undefined, notes: string[]): ConversationMessage[] {
  const raw = row?.stateData[DataKey.conversationHistory];
  if (typeof raw !== 'string' || raw === '') return [];
  let messages: unknown;
  try {
    messages = (JSON.parse(raw) as { messages?: unknown }).messages;
  } catch (error) {
    notes.push(`the stored chat history is not JSON (${errorMessage(error)}); not imported`);
    return [];
  }
  if (!Array.isArray(messages)) return [];
  const kept = messages.filter(isConversationMessage).map((message) => ({
    role: message.role,
    content: message.content,
    timestamp: typeof message.timestamp === 'string' ? message.timestamp : '',
  }));
  if (kept.length < messages.length) {
    notes.push(
      `${messages.length - kept.length} history message(s) that are neither the participant's nor the coach's`,
    );
  }
  return kept;
}

function timerOf(job: OriginalJobRow, data: StateData, now: Date): PlannedTimer | undefined {
  const kind = TIMER_KINDS[job.kind];
  if (!kind) return undefined;
  const text = (key: string) => (typeof job.payload[key] === 'string' ? (job.payload[key] as string) : undefined);
  const payload: Record<string, unknown> =
    kind === TimerJobKind.STATE_TRANSITION
      ? { target_state: text('target_state') ?? '', ...(text('reason') ? { reason: text('reason') } : {}) }
      : kind === TimerJobKind.DAILY_PROMPT_REMINDER
        ? { expected_sent_at: text('expected_sent_at') ?? '' }
        : kind === TimerJobKind.AUTO_FEEDBACK
          ? { prompt_sent_at: data[DataKey.lastPromptSentAt] ?? '' }
          : {};
  // Overdue while the original was stopped: due now, as the original would have run it on its next start.
  const runAt = job.runAt && job.runAt > now ? job.runAt : now;
  return { kind, runAt, payload, originalJobId: job.id };
}

/** The original left a schedule's zone empty when none was given, meaning UTC; PromptPipe's registry names it. */
function withZones(registry: string | undefined, notes: string[]): string | undefined {
  if (!registry) return registry;
  try {
    const entries: unknown = JSON.parse(registry);
    if (!Array.isArray(entries)) return registry;
    return JSON.stringify(
      entries.map((entry: Record<string, unknown>) => {
        if (typeof entry?.['timezone'] === 'string' && entry['timezone'] !== '') return entry;
        notes.push('a daily schedule without a time zone: read as UTC, as the original did');
        return { ...entry, timezone: 'UTC' };
      }),
    );
  } catch {
    notes.push('the daily schedule registry is not JSON; no schedule imported');
    return undefined;
  }
}

export interface PlanParticipantOptions {
  defaultCountry: string;
  defaultLanguage: string;
  prepTimeMinutes: number;
  now: Date;
}

/** The participant as PromptPipe will hold it, or why it cannot be imported. */
export function planParticipant(
  row: OriginalParticipantRow,
  flowState: OriginalFlowStateRow | undefined,
  jobs: readonly OriginalJobRow[],
  options: PlanParticipantOptions,
): PlannedParticipant | { problem: string } {
  let phoneNumber: string;
  try {
    phoneNumber = toE164(row.phoneNumber, options.defaultCountry);
  } catch {
    return { problem: `phone number "${row.phoneNumber}" cannot be read as a phone number` };
  }
  const notes: string[] = [];
  const stateData = stateDataOf(flowState, notes);
  const history = historyOf(flowState, notes);
  const [schedule, ...others] = parseScheduleRegistry(withZones(stateData[DataKey.scheduleRegistry], notes));
  if (others.length > 0) notes.push(`${others.length} more daily schedule(s): PromptPipe keeps one; the first is kept`);
  const status = (PARTICIPANT_STATUSES as readonly string[]).includes(row.status)
    ? (row.status as ParticipantStatus)
    : 'paused';
  if (status !== row.status) notes.push(`status "${row.status}" is not one PromptPipe knows; imported as paused`);
  const timezone = schedule ? (canonicalTimeZone(schedule.timezone) ?? '') : '';
  const enrolledAt = row.enrolledAt ?? row.createdAt ?? options.now;
  const participant: Participant = {
    id: row.id,
    phoneNumber,
    name: row.name.trim(),
    gender: row.gender.trim(),
    ethnicity: row.ethnicity.trim(),
    background: row.background.trim(),
    timezone,
    language: options.defaultLanguage,
    channel: '',
    status,
    enrolledAt,
    createdAt: row.createdAt ?? enrolledAt,
    updatedAt: row.updatedAt ?? enrolledAt,
  };
  const background = formatParticipantBackground(participant);
  if (!stateData[DataKey.participantBackground] && background) stateData[DataKey.participantBackground] = background;
  if (schedule) stateData[DataKey.scheduleRegistry] = JSON.stringify([{ ...schedule, timer_id: '' }]);
  const lastSent = Date.parse(stateData[DataKey.lastPromptSentAt] ?? '');
  const servedLocalDate =
    schedule && timezone && Number.isFinite(lastSent)
      ? localDateOf(new Date(lastSent + options.prepTimeMinutes * 60_000), timezone)
      : undefined;
  const timers = jobs
    .map((job) => timerOf(job, stateData, options.now))
    .filter((timer): timer is PlannedTimer => timer !== undefined);
  return { participant, stateData, history, schedule, servedLocalDate, timers, notes };
}
