export const ParticipantStatus = {
  ACTIVE: 'active',
  PAUSED: 'paused',
  COMPLETED: 'completed',
  WITHDRAWN: 'withdrawn',
} as const;
export type ParticipantStatus = (typeof ParticipantStatus)[keyof typeof ParticipantStatus];
export const PARTICIPANT_STATUSES: readonly ParticipantStatus[] = Object.values(ParticipantStatus);

/** A person enrolled in a study (specification §Enrollment). `phoneNumber` is E.164. */
export interface Participant {
  id: string;
  phoneNumber: string;
  name: string;
  gender: string;
  ethnicity: string;
  background: string;
  /** IANA time zone, or empty when unknown. */
  timezone: string;
  /**
   * BCP 47 tag (`en`, `es`, `pt-BR`), canonical: the language of the coach and of every fixed text. Always set on
   * participants read from the store; absent only on hand-built objects, which then speak `DEFAULT_LANGUAGE`.
   */
  language?: string;
  /** The channel the participant is reached on (`webhook`, `twilio`…); empty: the default channel. */
  channel: string;
  /** The trial arm in force (`STUDY_DESIGN_FILE`); absent without a study design. Not a column: `allocations`. */
  arm?: string;
  status: ParticipantStatus;
  enrolledAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** The `participantBackground` data key: present lines only (specification §Data keys, 3). */
export function formatParticipantBackground(
  participant: Pick<Participant, 'name' | 'gender' | 'ethnicity' | 'background'>,
): string {
  const lines: string[] = [];
  if (participant.name) lines.push(`Name: ${participant.name}`);
  if (participant.gender) lines.push(`Gender: ${participant.gender}`);
  if (participant.ethnicity) lines.push(`Ethnicity: ${participant.ethnicity}`);
  if (participant.background) lines.push(`Background: ${participant.background}`);
  return lines.join('\n');
}
