/**
 * The engagement guard (the idle rule of specification §Requests, applied to proactive messages): count the proactive
 * messages a participant leaves unanswered in a row; at `IDLE_AFTER_UNANSWERED` they become idle, and reminders and
 * feedback nudges stop (daily prompts go on unless `IDLE_PAUSES_PROMPTS`). Any real message makes them active again.
 *
 * Glossary:
 * - proactive message: one PromptPipe sends on its own initiative: a scheduled habit prompt, a daily-prompt
 *   reminder, a feedback nudge. Replies within a turn are not proactive.
 * - `unansweredProactiveCount` / `engagementState`: the visible state (data keys); changes are recorded as
 *   `engagement-changed` events.
 */
import { DataKey, type StateData } from '../../domain/data-keys.ts';
import { EngagementState } from '../../domain/engagement-state.ts';
import { readData, writeData } from '../../domain/participant-data.ts';
import type { StoreRepositories } from '../../store/store.ts';
import type { TimerConfig } from './timer-dependencies.ts';

export function engagementStateOf(data: StateData): EngagementState {
  return data[DataKey.engagementState] === EngagementState.IDLE ? EngagementState.IDLE : EngagementState.ACTIVE;
}

export function unansweredProactiveCountOf(data: StateData): number {
  const count = Number(data[DataKey.unansweredProactiveCount] ?? 0);
  return Number.isInteger(count) && count > 0 ? count : 0;
}

/** Reminders and feedback nudges are only sent to participants who are not idle. */
export function shouldSendNudge(data: StateData): boolean {
  return engagementStateOf(data) !== EngagementState.IDLE;
}

/** The daily-prompt handler asks this before sending: an idle participant keeps getting prompts unless configured. */
export function shouldSendDailyPrompt(data: StateData, config: Pick<TimerConfig, 'idlePausesPrompts'>): boolean {
  return !(config.idlePausesPrompts && engagementStateOf(data) === EngagementState.IDLE);
}

export interface ProactiveSentOutcome {
  unansweredProactiveCount: number;
  engagementState: EngagementState;
  /** True when this message made the participant idle. */
  becameIdle: boolean;
}

/**
 * Counts one more unanswered proactive message, through the timers' store in the unit of work that decides to send
 * it. At
 * `idleAfterUnanswered` (0 disables the guard) the participant becomes idle and an event is recorded.
 */
export async function recordProactiveSent(
  store: StoreRepositories,
  participantId: string,
  now: Date,
  config: Pick<TimerConfig, 'idleAfterUnanswered'>,
): Promise<ProactiveSentOutcome> {
  const data = await readData(store, participantId);
  const count = unansweredProactiveCountOf(data) + 1;
  const before = engagementStateOf(data);
  const threshold = config.idleAfterUnanswered;
  const after = threshold > 0 && count >= threshold ? EngagementState.IDLE : before;
  await writeData(
    store,
    participantId,
    { [DataKey.unansweredProactiveCount]: String(count), [DataKey.engagementState]: after },
    now,
  );
  const becameIdle = before !== EngagementState.IDLE && after === EngagementState.IDLE;
  if (becameIdle) {
    await store.events.record({
      participantId,
      type: 'engagement-changed',
      data: { from: before, to: after, unanswered_proactive_count: count },
      createdAt: now,
    });
  }
  return { unansweredProactiveCount: count, engagementState: after, becameIdle };
}

/**
 * A real participant message: resets the count and makes an idle participant active again (recorded as an event),
 * through the timers' store in the unit of work that records the message. Writes nothing when there is nothing to
 * reset, since it runs on every message.
 */
export async function recordParticipantReply(
  store: StoreRepositories,
  participantId: string,
  now: Date,
  sourceMessageId?: string,
): Promise<void> {
  const data = await readData(store, participantId);
  const before = engagementStateOf(data);
  const count = unansweredProactiveCountOf(data);
  if (count === 0 && before === EngagementState.ACTIVE && data[DataKey.engagementState] !== undefined) return;
  await writeData(
    store,
    participantId,
    { [DataKey.unansweredProactiveCount]: '0', [DataKey.engagementState]: EngagementState.ACTIVE },
    now,
  );
  if (before === EngagementState.IDLE) {
    await store.events.record({
      participantId,
      type: 'engagement-changed',
      data: { from: before, to: EngagementState.ACTIVE, unanswered_proactive_count_before: count },
      ...(sourceMessageId ? { sourceMessageId } : {}),
      createdAt: now,
    });
  }
}
