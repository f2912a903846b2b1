/**
 * Where the daily prompt's delivery (daily-prompt-handler.ts) lets others in: the hook the timers plug into after a
 * prompt is recorded, and the guard asked before generating.
 */
import type { Participant } from '../domain/participant.ts';
import type { Outgoing, SendOptions } from '../engine/messenger.ts';

/** A message the hook wants sent with the prompt, after its Done poll (e.g. the intensity poll). */
export interface FollowUpSend {
  participantId: string;
  message: Outgoing;
  options: SendOptions;
}

/** What the `afterPromptSent` hook is told. */
export interface PromptSentEvent {
  participantId: string;
  participant: Participant;
  /** When the prompt was sent; the reminder is due relative to this. */
  sentAt: Date;
  prompt: string;
  /** True when the generator failed and the fallback prompt was sent. */
  fallback: boolean;
}

/**
 * Runs inside the delivery's transaction, after the prompt is recorded: the timers plug in here (daily prompt
 * reminder, intensity poll check, auto-feedback enforcement, engagement count). It does not send; it returns the
 * messages to send, which the handler sends in the same transaction, after the Done poll.
 */
export type AfterPromptSentHook = (event: PromptSentEvent) => Promise<readonly FollowUpSend[] | undefined>;

/**
 * Asked before generating: may the prompt go out? A refusal skips the day (recorded) and arms the next one;
 * `done-poll-only` sends the day's Done poll without a prompt (a trial's assessment-only arm). A guard reads through
 * the store it was built with.
 */
export type PromptDeliveryGuard = (request: {
  participant: Participant;
  now: Date;
}) => Promise<{ deliver: true } | { deliver: false | 'done-poll-only'; reason: string }>;
