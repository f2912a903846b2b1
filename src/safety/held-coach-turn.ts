/**
 * The coach's turn held while a participant was under staff review (`SAFETY_COACH_TURN=hold`). Ending the review
 * releases it (alert-service.ts: a `held_coach_turn` job in the same transaction, so a restart between the flag and
 * the clearing loses nothing); this job runs it once. The turn is driven by a hint over the working history, which
 * holds the flagged message, the safety message, and whatever the participant and staff wrote since, in order.
 *
 * A turn whose reply is already in the transcript (the job retried after its reply committed) is not run again; a
 * conversation staff have taken over meanwhile, or a participant no longer answered, gets none.
 */

import type { Clock } from '../domain/clock.ts';
import { ParticipantStatus } from '../domain/participant.ts';
import type { ConversationFlow } from '../engine/conversation-flow.ts';
import type { Log } from '../observability/log.ts';
import type { JobHandler } from '../scheduling/job-runner.ts';
import type { Store } from '../store/store.ts';

export const HELD_TURN_JOB = 'held_coach_turn';
/** The held turn's user message: never stored, it only asks the coach to answer the conversation as it stands. */
export const HELD_TURN_HINT =
  "<Hint: The study team has reviewed this conversation and cleared the participant's safety review. Answer the participant now, taking into account the safety message and anything the study team wrote.>";

export function createHeldTurnHandler(options: {
  store: Store;
  clock: Clock;
  log: Log;
  flow: Pick<ConversationFlow, 'continueConversation'>;
  /** `PAUSE_ANSWERS_MESSAGES`: a paused participant's messages are still answered. */
  answerWhilePaused: boolean;
}): JobHandler {
  const { store, clock, log } = options;

  async function dropped(participantId: string, sourceMessageId: string, reason: string): Promise<void> {
    log.info({ participantId, sourceMessageId, reason }, 'held coach turn not run');
    await store.events.record({
      participantId,
      type: 'held-turn-dropped',
      data: { reason },
      sourceMessageId,
      createdAt: clock.now(),
    });
  }

  return async (job) => {
    const participantId = job.participantId;
    const sourceMessageId = job.payload['sourceMessageId'];
    if (!participantId || typeof sourceMessageId !== 'string') return;
    const linked = await store.transcript.forSourceMessage(participantId, sourceMessageId);
    if (linked.some((entry) => entry.role === 'assistant' && entry.kind === 'reply')) return;
    if (await store.takeovers.get(participantId)) return dropped(participantId, sourceMessageId, 'taken-over');
    const participant = await store.participants.get(participantId);
    const answered =
      participant?.status === ParticipantStatus.ACTIVE ||
      (participant?.status === ParticipantStatus.PAUSED && options.answerWhilePaused);
    if (!answered) return dropped(participantId, sourceMessageId, `participant is ${participant?.status ?? 'gone'}`);
    await options.flow.continueConversation(participantId, { hint: HELD_TURN_HINT, sourceMessageId });
  };
}
