/**
 * The organiser's views of a participant (the transcript with delivery receipts, the conversation state) and their
 * actions on the conversation (an admin transition, a message written by the organiser).
 */
import type { ConversationState } from '../domain/conversation-state.ts';
import { DataKey } from '../domain/data-keys.ts';
import { AppError } from '../domain/errors.ts';
import { conversationStateOf, writeData } from '../domain/participant-data.ts';
import { parseProfile } from '../domain/profile.ts';
import { appendToHistory, withHistory } from '../engine/conversation-history.ts';
import type { SentMessage } from '../engine/messenger.ts';
import {
  stateTransitionJobKey,
  type TransitionOutcome,
  transitionConversationState,
} from '../engine/state-transition.ts';
import { parseScheduleRegistry } from '../scheduling/schedule-registry.ts';
import type { ParticipantRules } from './participant-rules.ts';
import type { HistoryEntry, ParticipantServiceOptions, ParticipantStateView } from './participant-service-types.ts';

const DEFAULT_HISTORY_LIMIT = 100;

export function createParticipantViews(options: ParticipantServiceOptions, rules: ParticipantRules) {
  const { store, messenger, lock, clock } = options;
  const { requireParticipant } = rules;
  return { history, state, transition, sendOrganiserMessage };

  async function history(
    participantId: string,
    page: { limit?: number; before?: number } = {},
  ): Promise<HistoryEntry[]> {
    const entries = await store.transcript.list(participantId, {
      limit: page.limit ?? DEFAULT_HISTORY_LIMIT,
      ...(page.before !== undefined ? { before: page.before } : {}),
    });
    if (entries.length === 0) await requireParticipant(participantId);
    const outboundIds = entries.flatMap((entry) => (entry.outboundId ? [entry.outboundId] : []));
    const deliveries = outboundIds.length > 0 ? await store.deliveries.latest(outboundIds) : new Map();
    return entries.map((entry) => {
      const delivery = entry.outboundId ? deliveries.get(entry.outboundId) : undefined;
      return delivery ? { ...entry, delivery } : entry;
    });
  }

  async function state(participantId: string): Promise<ParticipantStateView> {
    await requireParticipant(participantId);
    const flowState = await store.flowStates.get(participantId);
    const data = await withHistory(store, participantId, flowState?.stateData ?? {});
    const storedProfile = data[DataKey.userProfile];
    return {
      currentState: flowState?.currentState ?? null,
      conversationState: conversationStateOf(data),
      profile: storedProfile ? parseProfile(storedProfile, clock.now()) : null,
      schedules: parseScheduleRegistry(data[DataKey.scheduleRegistry]),
      pendingJobs: await store.jobs.listPending({ participantId }),
      data,
    };
  }

  async function transition(
    participantId: string,
    request: { target: ConversationState; reason?: string },
  ): Promise<TransitionOutcome> {
    return lock.run(participantId, async () => {
      await requireParticipant(participantId);
      const now = clock.now();
      return store.transaction(async () => {
        // A delayed transition still pending would silently undo the override when it fires.
        const cancelledDelayed = (await store.jobs.cancelByKey(stateTransitionJobKey(participantId), now)) > 0;
        if (cancelledDelayed) await writeData(store, participantId, { [DataKey.stateTransitionTimerID]: '' }, now);
        return transitionConversationState(store, {
          participantId,
          target: request.target,
          source: 'admin',
          now,
          ...(request.reason ? { reason: request.reason } : {}),
        });
      });
    });
  }

  async function sendOrganiserMessage(participantId: string, text: string): Promise<SentMessage> {
    const content = text.trim();
    if (!content) throw new AppError('invalid_input', 'text must not be empty');
    return lock.run(participantId, async () => {
      await requireParticipant(participantId);
      const sent = await messenger.send(
        participantId,
        { type: 'text', text: content },
        { kind: 'organiser', module: 'api' },
      );
      // The participant saw this message from the same number as the coach: the model must know it was said, or
      // it would contradict it or ignore the participant's answer to it.
      const now = clock.now();
      await appendToHistory(store, participantId, [{ role: 'assistant', content, timestamp: now.toISOString() }]);
      return sent;
    });
  }
}
