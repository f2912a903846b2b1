/**
 * The daily prompt reminder (specification §Timers, scenarios 6 and 7): `DAILY_PROMPT_REMINDER_DELAY` after a scheduled
 * prompt, a friendly check-in is sent unless the participant replied in the meantime.
 *
 * Glossary:
 * - pending: `dailyPromptPending`, JSON `{sent_at, to, reminder_due_at}` (RFC 3339): a prompt awaiting a reply. A
 *   reply after `sent_at` clears it (and cancels the job); the reminder firing clears it too. Whoever clears it
 *   first wins, in one transaction, so a reply and its reminder never both happen.
 */
import { DataKey, type StateData } from '../../domain/data-keys.ts';
import { readData, writeData } from '../../domain/participant-data.ts';
import { appendToHistory } from '../../engine/conversation-history.ts';
import { createBuiltInMessageCatalogue } from '../../i18n/built-in-catalogues.ts';
import type { Job, StoreRepositories } from '../../store/store.ts';
import type { DeferredSend } from './deferred-sends.ts';
import { recordProactiveSent, shouldSendNudge } from './engagement-guard.ts';
import { recordTimerSkipped, runTimerJob } from './run-timer-job.ts';
import type { TimerConfig, TimerDependencies } from './timer-dependencies.ts';
import { cancelTimerJob, enqueueTimerJob, TIMER_ID_DATA_KEY, TimerJobKind } from './timer-jobs.ts';

/** The English text of the catalogue key `dailyPrompt.reminder` (sent in the participant's language). */
export const DAILY_PROMPT_REMINDER_MESSAGE =
  "Friendly check-in: we haven't heard back after today's habit prompt. Reply with a quick update when you're ready!";

/** Stored under `dailyPromptPending`; field names are the stored JSON names. */
export interface DailyPromptPending {
  sent_at: string;
  to: string;
  reminder_due_at: string;
}

export interface DailyPromptReminderPayload extends Record<string, unknown> {
  /** The `sent_at` of the prompt this reminder is for: a reminder for an older prompt is stale. */
  expected_sent_at: string;
}

export function parseDailyPromptPending(raw: string | undefined): DailyPromptPending | undefined {
  if (!raw) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<DailyPromptPending> | null;
    if (typeof value?.sent_at !== 'string') return undefined;
    return {
      sent_at: value.sent_at,
      to: typeof value.to === 'string' ? value.to : '',
      reminder_due_at: typeof value.reminder_due_at === 'string' ? value.reminder_due_at : '',
    };
  } catch {
    return undefined;
  }
}

/**
 * After a scheduled prompt, through the timers' store in the prompt's unit of work: replaces any existing reminder
 * with one due `dailyPromptReminderDelayMs` after `sentAt`. A zero or negative delay disables reminders; an existing
 * one is still cancelled, so a reminder can never outlive the prompt it was for.
 */
export async function scheduleDailyPromptReminder(
  dependencies: Pick<TimerDependencies, 'store' | 'newId'> & {
    config: Pick<TimerConfig, 'dailyPromptReminderDelayMs'>;
  },
  request: { participantId: string; to: string; sentAt: Date; now: Date },
): Promise<Job | undefined> {
  const { store } = dependencies;
  const { participantId, now } = request;
  await cancelTimerJob(store, TimerJobKind.DAILY_PROMPT_REMINDER, participantId, now);
  const delay = dependencies.config.dailyPromptReminderDelayMs;
  if (delay <= 0) {
    await writeData(store, participantId, { [DataKey.dailyPromptPending]: '' }, now);
    return undefined;
  }
  const dueAt = new Date(request.sentAt.getTime() + delay);
  const pending: DailyPromptPending = {
    sent_at: request.sentAt.toISOString(),
    to: request.to,
    reminder_due_at: dueAt.toISOString(),
  };
  await writeData(store, participantId, { [DataKey.dailyPromptPending]: JSON.stringify(pending) }, now);
  const payload: DailyPromptReminderPayload = { expected_sent_at: pending.sent_at };
  return enqueueTimerJob(dependencies, {
    kind: TimerJobKind.DAILY_PROMPT_REMINDER,
    participantId,
    runAt: dueAt,
    payload,
    now,
  });
}

/**
 * A participant's message (through the timers' store, in the unit of work that records it): a reply after the
 * pending prompt was sent cancels the reminder, clears the pending state and records `dailyPromptRespondedAt`.
 * Returns whether it did.
 */
export async function handleDailyPromptReply(
  store: StoreRepositories,
  event: { participantId: string; at: Date },
): Promise<boolean> {
  const data = await readData(store, event.participantId);
  const pending = parseDailyPromptPending(data[DataKey.dailyPromptPending]);
  if (!pending) return false;
  // A message older than the prompt (a delayed delivery of an earlier message) is no answer to it.
  if (!(event.at.getTime() > Date.parse(pending.sent_at))) return false;
  await cancelTimerJob(store, TimerJobKind.DAILY_PROMPT_REMINDER, event.participantId, event.at);
  await writeData(
    store,
    event.participantId,
    { [DataKey.dailyPromptPending]: '', [DataKey.dailyPromptRespondedAt]: event.at.toISOString() },
    event.at,
  );
  await store.events.record({
    participantId: event.participantId,
    type: 'reminder-cancelled',
    data: { kind: TimerJobKind.DAILY_PROMPT_REMINDER, prompt_sent_at: pending.sent_at },
    createdAt: event.at,
  });
  return true;
}

function isExpectedPrompt(data: StateData, job: Job): boolean {
  const pending = parseDailyPromptPending(data[DataKey.dailyPromptPending]);
  return (
    pending !== undefined && pending.sent_at === (job.payload as Partial<DailyPromptReminderPayload>).expected_sent_at
  );
}

/** The `daily_prompt_reminder` job handler. */
export function createDailyPromptReminderHandler(dependencies: TimerDependencies): (job: Job) => Promise<void> {
  const { store } = dependencies;
  const messages = dependencies.messages ?? createBuiltInMessageCatalogue();
  return (job) =>
    runTimerJob(
      dependencies,
      job,
      TIMER_ID_DATA_KEY[TimerJobKind.DAILY_PROMPT_REMINDER],
      async ({ participant, data, now }) => {
        const participantId = participant.id;
        // The prompt it was scheduled for was answered or superseded: stale, never fires.
        if (!isExpectedPrompt(data, job)) {
          await writeData(store, participantId, { [DataKey.dailyPromptReminderTimerID]: '' }, now);
          return [];
        }
        // Either way the reminder time has passed: the pending state has served its purpose.
        const cleared = { [DataKey.dailyPromptPending]: '', [DataKey.dailyPromptReminderTimerID]: '' };
        if (!shouldSendNudge(data)) {
          await writeData(store, participantId, cleared, now);
          await recordTimerSkipped(store, { job, now, participantId }, 'participant-idle');
          return [];
        }
        await writeData(
          store,
          participantId,
          { ...cleared, [DataKey.dailyPromptReminderSentAt]: now.toISOString() },
          now,
        );
        await recordProactiveSent(store, participantId, now, dependencies.config);
        const text = messages.t(participant.language, 'dailyPrompt.reminder');
        // The model must see the reminder to make sense of the reply it prompts.
        await appendToHistory(store, participantId, [
          { role: 'assistant', content: text, timestamp: now.toISOString() },
        ]);
        const send: DeferredSend = {
          participantId,
          message: { type: 'text', text },
          options: { kind: 'proactive', module: 'scheduler' },
        };
        return [send];
      },
    );
}
