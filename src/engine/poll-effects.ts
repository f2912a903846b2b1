/**
 * What a structured poll answer does to the profile before the model sees it (specification §The turn, step 2): a
 * "Done" answer to the Done poll counts a success; an intensity answer moves one step along low ↔ normal ↔ high. Pure.
 * Polls and options are recognised in every catalogue language ("Hecho" is a Done), see `fixed-polls.ts`.
 */
import type { PollAnswer } from '../domain/polls.ts';
import { type Intensity, stepIntensity, type UserProfile } from '../domain/profile.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import { FixedPollKind, fixedOptionOf, fixedPollOf, type IntensityOptionKey } from '../i18n/fixed-polls.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';

export type PollEffect =
  | { kind: 'success-counted'; successCount: number }
  | { kind: 'intensity-changed'; from: Intensity; to: Intensity }
  | { kind: 'intensity-kept'; intensity: Intensity }
  | { kind: 'none' };

function countSuccess(profile: UserProfile): PollEffect {
  profile.success_count += 1;
  return { kind: 'success-counted', successCount: profile.success_count };
}

function applyIntensity(profile: UserProfile, option: IntensityOptionKey | undefined): PollEffect {
  const from = profile.intensity;
  if (option === 'intensityPoll.increase' || option === 'intensityPoll.decrease') {
    const to = stepIntensity(from, option === 'intensityPoll.increase' ? 'increase' : 'decrease');
    profile.intensity = to;
    return to === from ? { kind: 'intensity-kept', intensity: from } : { kind: 'intensity-changed', from, to };
  }
  return { kind: 'intensity-kept', intensity: from };
}

/** Mutates `profile` and says what happened. `messages` defaults to the built-in catalogues. */
export function applyPollAnswer(
  profile: UserProfile,
  answer: PollAnswer,
  messages: MessageCatalogue = createBuiltInMessageCatalogue(),
): PollEffect {
  const option = answer.option.trim();
  if (answer.question === undefined) {
    // Without its question an answer is only trusted when it is verbatim one of the fixed options.
    if (fixedOptionOf(messages, FixedPollKind.DONE, answer.option, { exact: true }) === 'donePoll.done') {
      return countSuccess(profile);
    }
    const intensity = fixedOptionOf(messages, FixedPollKind.INTENSITY, answer.option, { exact: true });
    return intensity ? applyIntensity(profile, intensity) : { kind: 'none' };
  }
  const poll = fixedPollOf(messages, answer.question);
  if (poll === FixedPollKind.DONE) {
    const done = fixedOptionOf(messages, FixedPollKind.DONE, option, { exact: false }) === 'donePoll.done';
    return done ? countSuccess(profile) : { kind: 'none' };
  }
  if (poll === FixedPollKind.INTENSITY) {
    return applyIntensity(profile, fixedOptionOf(messages, FixedPollKind.INTENSITY, option, { exact: true }));
  }
  return { kind: 'none' };
}
