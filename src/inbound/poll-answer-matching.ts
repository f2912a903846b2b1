/**
 * Typed answers to polls (channels without native polls, or a participant who simply types): which open poll a
 * reply answers, and with which option. Open polls are the ones sent since the participant last wrote (the Done poll
 * is followed by the intensity poll on a prompt day, and either may be answered first).
 *
 * 1. A number ("2", "2.") designates an option of the latest run of polls sent one after another, numbered on
 *    across them (the Done poll 1–2, the intensity poll 3–5; see recorded-polls.ts); without a run, of the newest poll.
 * 2. An option's exact text (case and trailing punctuation aside), of any open poll, newest first.
 * 3. For PromptPipe's own polls, an option's text in any catalogue language ("Hecho" to a Done poll sent in
 *    English after the participant switched to Spanish), mapped to the option as it was sent.
 * Anything else is free text for the model: a poll answer is never guessed out of a sentence.
 */
import type { PollAnswer } from '../domain/polls.ts';
import { fixedOptionOf, fixedPollOf } from '../i18n/fixed-polls.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import { optionByNumber, type RecordedPoll } from './recorded-polls.ts';

/** A poll still open for an answer: as the transcript records it. */
export type OpenPoll = RecordedPoll;

function translatedOption(reply: string, poll: OpenPoll, messages: MessageCatalogue): string | undefined {
  const kind = fixedPollOf(messages, poll.question);
  if (!kind) return undefined;
  const key = fixedOptionOf(messages, kind, reply, { exact: false });
  if (!key) return undefined;
  return poll.options.find((option) => fixedOptionOf(messages, kind, option, { exact: true }) === key);
}

/**
 * The option a reply designates: its 1-based number ("2", "2.", "2)") or its exact text, ignoring case and
 * surrounding space and punctuation. Anything else (a sentence that merely contains an option) is undefined: the
 * model reads free text, a poll answer is never guessed out of it.
 */
export function matchPollOption(reply: string, options: readonly string[]): string | undefined {
  const trimmed = reply.trim();
  const number = /^(\d{1,2})[.)]?$/.exec(trimmed);
  if (number) return options[Number(number[1]) - 1];
  const normalise = (text: string): string =>
    text
      .trim()
      .replace(/[.!]+$/u, '')
      .toLocaleLowerCase();
  const wanted = normalise(trimmed);
  return options.find((option) => normalise(option) === wanted);
}

/** `openPolls` newest first; `numberedRun` the latest run of polls numbered on, oldest first. */
export function matchTypedAnswer(
  reply: string,
  openPolls: readonly OpenPoll[],
  messages: MessageCatalogue,
  numberedRun: readonly OpenPoll[] = [],
): PollAnswer | undefined {
  const [newest] = openPolls;
  if (!newest) return undefined;
  const answer = (poll: OpenPoll, option: string): PollAnswer => ({ pollId: poll.id, question: poll.question, option });
  const number = /^\s*(\d{1,2})[.)]?\s*$/.exec(reply);
  if (number) {
    if (numberedRun.length > 0) {
      const found = optionByNumber(Number(number[1]), numberedRun);
      return found ? answer(found.poll, found.option) : undefined;
    }
    const option = matchPollOption(reply, newest.options);
    return option === undefined ? undefined : answer(newest, option);
  }
  for (const poll of openPolls) {
    const option = matchPollOption(reply, poll.options);
    if (option !== undefined) return answer(poll, option);
  }
  for (const poll of openPolls) {
    const option = translatedOption(reply, poll, messages);
    if (option !== undefined) return answer(poll, option);
  }
  return undefined;
}
