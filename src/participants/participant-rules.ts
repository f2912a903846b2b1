/**
 * What every participant operation checks and fills in the same way: a participant that exists, an enabled channel,
 * a canonical time zone and language, the default channel of participants from before channels, the trial arm.
 */
import { AppError } from '../domain/errors.ts';
import { canonicalLanguageTag, ENGLISH, unknownLanguageProblem } from '../domain/language.ts';
import type { Participant } from '../domain/participant.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import { canonicalTimeZone } from '../scheduling/schedule-time.ts';
import type { ParticipantServiceOptions } from './participant-service-types.ts';

export type ParticipantRules = ReturnType<typeof participantRules>;

/** The enrolment check: a participant's channel must be enabled; the message names the allowed values. */
function requireEnabledChannel(names: readonly string[], channel: string): string {
  const wanted = channel.trim().toLowerCase();
  if (!names.includes(wanted)) {
    throw new AppError('invalid_input', `channel must be one of ${names.join(', ')} (got "${channel}")`);
  }
  return wanted;
}

export function participantRules(options: ParticipantServiceOptions) {
  const { store, study } = options;
  const random = options.random ?? Math.random;
  const messages = options.messages ?? createBuiltInMessageCatalogue(options.defaultLanguage);
  const defaultLanguage = canonicalLanguageTag(options.defaultLanguage ?? ENGLISH) ?? ENGLISH;
  const channelNames = options.channelNames ?? ['webhook'];
  const validChannel = (channel: string | undefined): string | undefined =>
    channel === undefined ? undefined : requireEnabledChannel(channelNames, channel);
  /** Participants enrolled before channels were per participant are on the default channel. */
  const withChannel = (participant: Participant): Participant =>
    participant.channel ? participant : { ...participant, channel: channelNames[0] ?? '' };
  /** The arm in force, read from the allocations: it is not a participant column, and a staff override changes it. */
  async function withArm(participant: Participant): Promise<Participant> {
    if (!study) return participant;
    const allocation = await store.allocations.get(participant.id);
    return allocation ? { ...participant, arm: allocation.armId } : participant;
  }
  async function withArms(list: Participant[]): Promise<Participant[]> {
    if (!study) return list;
    const arms = await store.allocations.armsByParticipant(study.design.study.id);
    return list.map((participant) => {
      const arm = arms.get(participant.id);
      return arm === undefined ? participant : { ...participant, arm };
    });
  }

  async function requireParticipant(participantId: string): Promise<Participant> {
    const participant = await store.participants.get(participantId);
    if (!participant) throw new AppError('not_found', `participant ${participantId} not found`);
    return participant;
  }

  function validTimeZone(timezone: string | undefined): string | undefined {
    if (timezone === undefined) return undefined;
    if (timezone.trim() === '') return '';
    const canonical = canonicalTimeZone(timezone);
    if (!canonical) {
      throw new AppError('invalid_input', `timezone "${timezone}" is not an IANA time zone such as "America/New_York"`);
    }
    return canonical;
  }

  function validLanguage(language: string | undefined): string | undefined {
    if (language === undefined) return undefined;
    const canonical = canonicalLanguageTag(language);
    if (!canonical) {
      throw new AppError('invalid_input', `language ${unknownLanguageProblem(language)}`);
    }
    return canonical;
  }

  return {
    random,
    messages,
    defaultLanguage,
    channelNames,
    validChannel,
    withChannel,
    withArm,
    withArms,
    requireParticipant,
    validTimeZone,
    validLanguage,
  };
}
