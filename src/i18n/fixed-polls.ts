/**
 * The two polls PromptPipe itself sends (the Done poll and the intensity poll), in every catalogue language, and
 * their recognition: an answer counts by what it means, whatever language the poll or the answer was in, so a
 * Spanish participant's "Hecho" is a Done exactly as "Done" is.
 */
import type { Intensity } from '../domain/profile.ts';
import type { MessageCatalogue, MessageKey } from './message-catalogue.ts';

export const FixedPollKind = { DONE: 'done', INTENSITY: 'intensity' } as const;
export type FixedPollKind = (typeof FixedPollKind)[keyof typeof FixedPollKind];

export const DONE_POLL_KEYS = {
  question: 'donePoll.question',
  options: ['donePoll.done', 'donePoll.nextTime'],
} as const satisfies { question: MessageKey; options: readonly MessageKey[] };

export const INTENSITY_POLL_KEYS = {
  question: 'intensityPoll.question',
  options: ['intensityPoll.decrease', 'intensityPoll.keep', 'intensityPoll.increase'],
} as const satisfies { question: MessageKey; options: readonly MessageKey[] };

export type DoneOptionKey = (typeof DONE_POLL_KEYS.options)[number];
export type IntensityOptionKey = (typeof INTENSITY_POLL_KEYS.options)[number];
export type FixedOptionKey = DoneOptionKey | IntensityOptionKey;

const POLL_KEYS = { [FixedPollKind.DONE]: DONE_POLL_KEYS, [FixedPollKind.INTENSITY]: INTENSITY_POLL_KEYS } as const;

export interface LocalizedPoll {
  question: string;
  options: string[];
}

/** The Done poll in a participant's language. */
export function donePoll(messages: MessageCatalogue, language: string | undefined): LocalizedPoll {
  return {
    question: messages.t(language, DONE_POLL_KEYS.question),
    options: DONE_POLL_KEYS.options.map((key) => messages.t(language, key)),
  };
}

/** The intensity poll in a participant's language: no "decrease" at low, no "increase" at high. */
export function intensityPoll(
  messages: MessageCatalogue,
  language: string | undefined,
  current: Intensity,
): LocalizedPoll {
  const keys: IntensityOptionKey[] =
    current === 'low'
      ? ['intensityPoll.keep', 'intensityPoll.increase']
      : current === 'high'
        ? ['intensityPoll.decrease', 'intensityPoll.keep']
        : [...INTENSITY_POLL_KEYS.options];
  return {
    question: messages.t(language, INTENSITY_POLL_KEYS.question),
    options: keys.map((key) => messages.t(language, key)),
  };
}

/** Case, surrounding space and trailing `.`/`!` do not matter; accents do (they change words). */
export function normaliseAnswer(text: string): string {
  return text
    .trim()
    .replace(/[.!]+$/u, '')
    .trim()
    .toLocaleLowerCase();
}

/** Which fixed poll a question is, in any catalogue language; undefined for any other poll. */
export function fixedPollOf(messages: MessageCatalogue, question: string): FixedPollKind | undefined {
  const wanted = question.trim();
  for (const kind of Object.values(FixedPollKind)) {
    if (messages.languages.some((language) => messages.t(language, POLL_KEYS[kind].question) === wanted)) return kind;
  }
  return undefined;
}

/**
 * The option key an answer names, in any catalogue language. `exact`: the text as sent (a structured answer echoes
 * the option verbatim); otherwise case and trailing punctuation are ignored (typed text).
 */
export function fixedOptionOf<K extends FixedPollKind>(
  messages: MessageCatalogue,
  kind: K,
  answer: string,
  options: { exact: boolean },
): (K extends 'done' ? DoneOptionKey : IntensityOptionKey) | undefined {
  const same = options.exact
    ? (text: string) => text === answer.trim()
    : (text: string) => normaliseAnswer(text) === normaliseAnswer(answer);
  const keys: readonly FixedOptionKey[] = POLL_KEYS[kind].options;
  const found = keys.find((key) => messages.languages.some((language) => same(messages.t(language, key))));
  return found as (K extends 'done' ? DoneOptionKey : IntensityOptionKey) | undefined;
}
