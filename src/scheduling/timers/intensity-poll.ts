/**
 * The intensity poll (specification §Timers, scenario 8): right after a scheduled prompt, at most once per
 * participant-local calendar day, "How's the intensity?" with options by the current intensity (in the participant's
 * language), as its own poll message. The answer comes back as a structured poll answer and is applied by the
 * conversation engine.
 */
import { DataKey } from '../../domain/data-keys.ts';
import type { Participant } from '../../domain/participant.ts';
import { readData, readProfile, writeData } from '../../domain/participant-data.ts';
import { createBuiltInMessageCatalogue } from '../../i18n/built-in-catalogues.ts';
import { intensityPoll } from '../../i18n/fixed-polls.ts';
import type { MessageCatalogue } from '../../i18n/message-catalogue.ts';
import type { StoreRepositories } from '../../store/store.ts';
import { parseScheduleRegistry } from '../schedule-registry.ts';
import { canonicalTimeZone, localDateOf } from '../schedule-time.ts';
import type { DeferredSend } from './deferred-sends.ts';

const FALLBACK_TIME_ZONE = 'UTC';

/** The zone whose calendar day counts: the participant's own, else their schedule's, else UTC. */
export function participantTimeZone(
  participant: Pick<Participant, 'timezone'>,
  scheduleRegistry: string | undefined,
): string {
  const own = canonicalTimeZone(participant.timezone);
  if (own) return own;
  const [schedule] = parseScheduleRegistry(scheduleRegistry);
  return (schedule && canonicalTimeZone(schedule.timezone)) ?? FALLBACK_TIME_ZONE;
}

/**
 * Decides the intensity poll in the prompt's unit of work, through the timers' store: when none was sent on the
 * prompt's local date, records the date and returns the poll for the daily-prompt handler to send after the commit,
 * after the Done poll (no send may happen inside a transaction, see deferred-sends.ts). Recording first means a re-run
 * never polls twice in one day. Returns undefined when that day's poll was already sent.
 */
export async function checkIntensityPoll(
  store: StoreRepositories,
  request: { participant: Participant; promptSentAt: Date; now: Date; messages?: MessageCatalogue },
): Promise<DeferredSend | undefined> {
  const { participant, now } = request;
  const data = await readData(store, participant.id);
  const day = localDateOf(request.promptSentAt, participantTimeZone(participant, data[DataKey.scheduleRegistry]));
  if (data[DataKey.lastIntensityPromptDate] === day) return undefined;
  const profile = await readProfile(store, participant.id, now);
  await writeData(store, participant.id, { [DataKey.lastIntensityPromptDate]: day }, now);
  return {
    participantId: participant.id,
    message: {
      type: 'poll',
      ...intensityPoll(request.messages ?? createBuiltInMessageCatalogue(), participant.language, profile.intensity),
    },
    options: { kind: 'poll', module: 'scheduler' },
  };
}
