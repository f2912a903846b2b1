/**
 * Enrolment: a participant, their flow state, their trial arm and decision points in one commit, then the greeting
 * (whose failure does not undo the enrolment).
 */
import { DataKey } from '../domain/data-keys.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import { formatParticipantBackground, type Participant, ParticipantStatus } from '../domain/participant.ts';
import { newFlowState } from '../domain/participant-data.ts';
import { toE164 } from '../domain/phone.ts';
import { allocateParticipant, stratumFields } from '../trials/allocate-participant.ts';
import { armDecisionPoints } from '../trials/decision-jobs.ts';
import type { ParticipantRules } from './participant-rules.ts';
import type { EnrollmentOptions, EnrollmentRequest, ParticipantServiceOptions } from './participant-service-types.ts';

export function createEnroll(options: ParticipantServiceOptions, rules: ParticipantRules) {
  const { store, flow, clock, newId, log, defaultCountry, study } = options;
  const { validTimeZone, validLanguage, validChannel, defaultLanguage, channelNames } = rules;
  return enroll;

  async function enroll(request: EnrollmentRequest, enrollment: EnrollmentOptions = {}): Promise<Participant> {
    const phoneNumber = toE164(request.phoneNumber, defaultCountry);
    const timezone = validTimeZone(request.timezone) ?? '';
    const language = validLanguage(request.language) ?? defaultLanguage;
    const channel = validChannel(request.channel) ?? channelNames[0] ?? '';
    const existing = await store.participants.getByPhone(phoneNumber);
    if (existing) {
      throw new AppError('conflict', `phone_number ${phoneNumber} is already enrolled (participant ${existing.id})`);
    }
    const now = clock.now();
    const participant: Participant = {
      id: newId('conv'),
      phoneNumber,
      name: request.name?.trim() ?? '',
      gender: request.gender?.trim() ?? '',
      ethnicity: request.ethnicity?.trim() ?? '',
      background: request.background?.trim() ?? '',
      timezone,
      language,
      channel,
      status: ParticipantStatus.ACTIVE,
      enrolledAt: now,
      createdAt: now,
      updatedAt: now,
    };
    const background = formatParticipantBackground(participant);
    const arm = await store.transaction(async (tx) => {
      // The store's unique phone index is the real guard: two simultaneous enrolments of one number → one conflict.
      await tx.participants.create(participant);
      // In the enrollment's commit: a participant is never enrolled without an arm, nor an arm drawn for nobody.
      const allocation = study
        ? await allocateParticipant(tx, study, {
            participantId: participant.id,
            fields: stratumFields(participant, request.importColumns),
            now,
          })
        : undefined;
      // The participant's first moment of each decision point, durable from the enrollment's commit on.
      const armedDecisions = study ? await armDecisionPoints(tx, study, { participant, now, newId }) : 0;
      if (armedDecisions > 0) tx.afterCommit(() => options.onJobEnqueued?.());
      if (allocation) {
        await tx.events.record({
          participantId: participant.id,
          type: 'participant-allocated',
          data: {
            study_id: allocation.studyId,
            arm: allocation.armId,
            stratum: allocation.stratum,
            design_hash: allocation.designHash,
          },
          createdAt: now,
        });
      }
      await tx.flowStates.save(
        newFlowState(participant.id, now, background ? { [DataKey.participantBackground]: background } : {}),
      );
      await tx.events.record({
        participantId: participant.id,
        type: 'participant-enrolled',
        data: { source: enrollment.source ?? 'api', timezone: timezone || null, channel, language },
        createdAt: now,
      });
      return allocation?.armId;
    });
    log.info({ participantId: participant.id, source: enrollment.source ?? 'api', arm }, 'participant enrolled');
    if (enrollment.greet ?? true) {
      // Enrollment succeeded once the participant is stored; a failed greeting (LLM down, bug) must not undo it.
      try {
        await flow.greet(participant.id);
      } catch (error) {
        log.error({ participantId: participant.id, error: errorMessage(error) }, 'enrollment greeting failed');
      }
    }
    return arm === undefined ? participant : { ...participant, arm };
  }
}
