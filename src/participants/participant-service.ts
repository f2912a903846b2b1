/**
 * A participant's life cycle: enroll, read, update, unregister, and the organiser's views and actions (history,
 * state, admin transition, organiser message). The HTTP API, the inbound pipeline (auto-enrolment) and the CLI all
 * go through here, so the rules live in one place.
 *
 * Writes that touch a participant's conversation state run under the participant lock (the same lock the engine and
 * the job runner take), so an admin action never interleaves with a turn or a timer of the same participant.
 */
import { DataKey } from '../domain/data-keys.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import { formatParticipantBackground, type Participant, ParticipantStatus } from '../domain/participant.ts';
import { writeData } from '../domain/participant-data.ts';
import { toE164 } from '../domain/phone.ts';
import { ensureDailyPromptJob } from '../scheduling/daily-prompt-jobs.ts';
import { cancelAllParticipantJobs } from '../scheduling/timers/index.ts';
import { createEnroll } from './enrollment.ts';
import { participantRules } from './participant-rules.ts';
import type { ParticipantService, ParticipantServiceOptions, ParticipantUpdate } from './participant-service-types.ts';
import { createParticipantViews } from './participant-views.ts';

export * from './participant-service-types.ts';

export function createParticipantService(options: ParticipantServiceOptions): ParticipantService {
  const { store, messenger, lock, clock, newId, log, defaultCountry } = options;
  const rules = participantRules(options);
  const { random, messages, validTimeZone, validLanguage, validChannel, requireParticipant, withArm, withChannel } =
    rules;
  const enroll = createEnroll(options, rules);
  const arming = { store, newId, random, prepTimeMinutes: options.prepTimeMinutes };
  const { history, state, transition, sendOrganiserMessage } = createParticipantViews(options, rules);

  async function update(participantId: string, change: ParticipantUpdate): Promise<Participant> {
    const timezone = validTimeZone(change.timezone);
    const language = validLanguage(change.language);
    const channel = validChannel(change.channel);
    return lock.run(participantId, async () => {
      const before = await requireParticipant(participantId);
      const now = clock.now();
      const patch = {
        ...(change.name !== undefined ? { name: change.name.trim() } : {}),
        ...(change.gender !== undefined ? { gender: change.gender.trim() } : {}),
        ...(change.ethnicity !== undefined ? { ethnicity: change.ethnicity.trim() } : {}),
        ...(change.background !== undefined ? { background: change.background.trim() } : {}),
        ...(timezone !== undefined ? { timezone } : {}),
        ...(language !== undefined ? { language } : {}),
        ...(channel !== undefined ? { channel } : {}),
        ...(change.status !== undefined ? { status: change.status } : {}),
      };
      const leavesActive =
        before.status === ParticipantStatus.ACTIVE &&
        change.status !== undefined &&
        change.status !== ParticipantStatus.ACTIVE;
      const returnsToActive = before.status !== ParticipantStatus.ACTIVE && change.status === ParticipantStatus.ACTIVE;
      const updated = await store.transaction(async (tx) => {
        const updated = await tx.participants.update(participantId, { ...patch, updatedAt: now });
        if (!updated) throw new AppError('not_found', `participant ${participantId} not found`);
        // Keep the model's view of the participant in step with the organiser's edits.
        if (['name', 'gender', 'ethnicity', 'background'].some((field) => field in patch)) {
          await writeData(
            tx,
            participantId,
            { [DataKey.participantBackground]: formatParticipantBackground(updated) },
            now,
          );
        }
        // Leaving `active` stops every proactive message: prompts, reminders, timers and queued deliveries.
        const cancelledJobs = leavesActive ? await cancelAllParticipantJobs(tx, participantId, now) : 0;
        // Leaving `active` cancelled the daily prompt; coming back re-arms the schedule the participant still has.
        const rearmed = returnsToActive ? await ensureDailyPromptJob(arming, { participantId, now }) : undefined;
        await tx.events.record({
          participantId,
          type: 'participant-updated',
          data: {
            fields: Object.keys(patch),
            ...(change.status !== undefined ? { status_from: before.status, status_to: change.status } : {}),
            cancelled_jobs: cancelledJobs,
            ...(rearmed ? { next_prompt_at: rearmed.job.runAt.toISOString() } : {}),
          },
          createdAt: now,
        });
        return { participant: updated, rearmed: rearmed !== undefined };
      });
      if (updated.rearmed) options.onJobEnqueued?.();
      return withArm(withChannel(updated.participant));
    });
  }

  async function unregister(
    participantId: string,
    removal: { purgeTranscript?: boolean } = {},
  ): Promise<{ purgedEntries: number }> {
    return lock.run(participantId, async () => {
      const participant = await requireParticipant(participantId);
      // Order matters: cancel first, then send. The notice's own `deliver_message` job is enqueued after the
      // cancellation, so it survives it, and jobs carry no foreign key, so it survives the participant's removal too.
      await store.transaction((tx) => cancelAllParticipantJobs(tx, participantId, clock.now()));
      try {
        await messenger.send(
          participantId,
          { type: 'text', text: messages.t(participant.language, 'notice.unregistered') },
          { kind: 'notice', module: 'api' },
        );
      } catch (error) {
        log.error({ participantId, error: errorMessage(error) }, 'unregister notice could not be queued');
      }
      const now = clock.now();
      const removed = await store.transaction(async (tx) => {
        await tx.flowStates.delete(participantId);
        await tx.participants.delete(participantId);
        // In the same commit: a kept transcript must not stay readable through the chat link for a moment, or for
        // good if the server stopped between two commits.
        await tx.webChatTokens.revokeAll(participantId, now);
        const purgedEntries = removal.purgeTranscript ? await tx.transcript.purge(participantId) : 0;
        await tx.events.record({
          participantId,
          type: 'participant-deleted',
          data: { purged_transcript: removal.purgeTranscript ?? false, purged_entries: purgedEntries },
          createdAt: now,
        });
        log.info({ participantId, purgedEntries }, 'participant unregistered');
        return { purgedEntries };
      });
      options.onDeleted?.(participantId);
      return removed;
    });
  }

  return {
    enroll,
    list: async (filter) => rules.withArms((await store.participants.list(filter)).map(withChannel)),
    get: async (participantId) => withArm(withChannel(await requireParticipant(participantId))),
    async findByPhone(phoneNumber) {
      const participant = await store.participants.getByPhone(toE164(phoneNumber, defaultCountry));
      return participant && withChannel(participant);
    },
    update,
    unregister,
    history,
    state,
    transition,
    sendOrganiserMessage,
  };
}
