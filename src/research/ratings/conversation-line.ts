/** One line of a simulated conversation, as both sides saw it (stamped with the study clock). */
export interface ConversationLine {
  at: string;
  from: 'coach' | 'persona';
  text: string;
  /** Coach: the transcript's kind (`reply`, `proactive`, `poll`…) and module; persona: `poll-answer` or `message`. */
  kind: string;
  module?: string;
  pollOptions?: string[];
  /** Persona: what the line was for (`risk`, `opt-out`). */
  mark?: string;
}
