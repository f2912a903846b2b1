/**
 * What a structured poll answer does to the profile before the model sees it (§2.2 step 4): a "Done" answer to the
 * Done poll counts a success; an intensity answer moves one step along low ↔ normal ↔ high. Pure.
 */
import { DONE_POLL, INTENSITY_POLL_QUESTION, IntensityOption, type PollAnswer } from '../domain/polls.ts';
import { type Intensity, stepIntensity, type UserProfile } from '../domain/profile.ts';

export type PollEffect =
  | { kind: 'success-counted'; successCount: number }
  | { kind: 'intensity-changed'; from: Intensity; to: Intensity }
  | { kind: 'intensity-kept'; intensity: Intensity }
  | { kind: 'none' };

const INTENSITY_OPTIONS: readonly string[] = Object.values(IntensityOption);

function isDonePoll(answer: PollAnswer): boolean {
  return answer.question === undefined
    ? answer.option === DONE_POLL.doneOption
    : answer.question === DONE_POLL.question;
}

function isIntensityPoll(answer: PollAnswer): boolean {
  return answer.question === undefined
    ? INTENSITY_OPTIONS.includes(answer.option)
    : answer.question === INTENSITY_POLL_QUESTION;
}

/** Mutates `profile` and says what happened. */
export function applyPollAnswer(profile: UserProfile, answer: PollAnswer): PollEffect {
  const option = answer.option.trim();
  if (isDonePoll(answer)) {
    if (option.toLowerCase() !== DONE_POLL.doneOption.toLowerCase()) return { kind: 'none' };
    profile.success_count += 1;
    return { kind: 'success-counted', successCount: profile.success_count };
  }
  if (isIntensityPoll(answer)) {
    const from = profile.intensity;
    if (option === IntensityOption.INCREASE || option === IntensityOption.DECREASE) {
      const to = stepIntensity(from, option === IntensityOption.INCREASE ? 'increase' : 'decrease');
      profile.intensity = to;
      return to === from ? { kind: 'intensity-kept', intensity: from } : { kind: 'intensity-changed', from, to };
    }
    return { kind: 'intensity-kept', intensity: from };
  }
  return { kind: 'none' };
}
