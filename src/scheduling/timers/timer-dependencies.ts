/**
 * What the timers are built from: one named-options object, wired in the composition root (see `index.ts`).
 */
import type { Config } from '../../config.ts';
import type { Clock } from '../../domain/clock.ts';
import type { NewId } from '../../domain/ids.ts';
import type { Log } from '../../domain/log.ts';
import type { Messenger } from '../../engine/messenger.ts';
import type { MessageCatalogue } from '../../i18n/message-catalogue.ts';
import type { Store } from '../../store/store.ts';

/** The settings the timers read; a subset of `Config['scheduling']`, so tests can pass a literal. */
export type TimerConfig = Pick<
  Config['scheduling'],
  | 'dailyPromptReminderDelayMs'
  | 'autoFeedbackAfterPromptEnabled'
  | 'feedbackInitialTimeoutMs'
  | 'feedbackFollowupDelayMs'
  | 'idleAfterUnanswered'
  | 'idlePausesPrompts'
>;

/** The defaults of `config.ts`, for tests and tools that build timers without a full configuration. */
export const DEFAULT_TIMER_CONFIG: TimerConfig = {
  dailyPromptReminderDelayMs: 5 * 60 * 60_000,
  autoFeedbackAfterPromptEnabled: true,
  feedbackInitialTimeoutMs: 15 * 60_000,
  feedbackFollowupDelayMs: 3 * 60 * 60_000,
  idleAfterUnanswered: 3,
  idlePausesPrompts: false,
};

/** Which of a participant's timers run: a trial arm may switch some off (`STUDY_DESIGN_FILE`). */
export interface TimerFeatures {
  reminders: boolean;
  autoFeedback: boolean;
  intensityPoll: boolean;
  feedbackFollowups: boolean;
}

export const ALL_TIMER_FEATURES: TimerFeatures = {
  reminders: true,
  autoFeedback: true,
  intensityPoll: true,
  feedbackFollowups: true,
};

/**
 * Read through the source's own store in the unit of work that would arm the timers, so an arm override applies from
 * the next prompt on.
 */
export type TimerFeatureSource = (participantId: string) => Promise<TimerFeatures>;

export interface TimerDependencies {
  store: Store;
  clock: Clock;
  newId: NewId;
  messenger: Messenger;
  config: TimerConfig;
  log: Log;
  /** The reminder, nudges and intensity poll in the participant's language; defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
  /** Per participant, which timers run; all of them when absent (no study design). */
  features?: TimerFeatureSource;
}
