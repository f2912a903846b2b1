import type { Intensity } from './profile.ts';

/**
 * The "Did you do it?" poll sent after each scheduled habit prompt, in the contract's English. A "Done" answer counts
 * a success. What is sent comes from the message catalogue in the participant's language (`i18n/fixed-polls.ts`);
 * these English constants equal `catalogues/en.json` (a test checks it).
 */
export const DONE_POLL = {
  question: 'Did you do it?',
  doneOption: 'Done',
  options: ['Done', 'Next time'],
} as const;

export const INTENSITY_POLL_QUESTION = "How's the intensity?";

export const IntensityOption = { DECREASE: 'Decrease', KEEP: 'Keep current', INCREASE: 'Increase' } as const;

/** Options offered by current intensity: no "Decrease" at low, no "Increase" at high. */
export function intensityPollOptions(current: Intensity): string[] {
  if (current === 'low') return [IntensityOption.KEEP, IntensityOption.INCREASE];
  if (current === 'high') return [IntensityOption.DECREASE, IntensityOption.KEEP];
  return [IntensityOption.DECREASE, IntensityOption.KEEP, IntensityOption.INCREASE];
}

/** A structured poll answer as it arrives from a channel (never parsed out of free text). */
export interface PollAnswer {
  /** The id of the poll message, when the channel knows it. */
  pollId?: string;
  /** The question, when known (channels resolve it from the poll id). */
  question?: string;
  option: string;
  /**
   * The option's position (0-based) in the poll, when the channel's answer carries it (WhatsApp Cloud reply ids):
   * with the poll id it recovers the full option when the provider only echoes a shortened title.
   */
  optionIndex?: number;
}

/** How a poll answer reaches the model: `Q: Did you do it? A: Done`. */
export function formatPollAnswer(answer: PollAnswer): string {
  return answer.question ? `Q: ${answer.question} A: ${answer.option}` : answer.option;
}
