/**
 * Polls on channels without native polls: the question followed by numbered options, and the reverse — a reply
 * that is exactly an option's number or text becomes the structured poll answer.
 */

import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { OutboundPoll } from './channel.ts';
import { numberedPollInstruction } from './channel-texts.ts';

/** `Did you do it?\nReply 1 for Done, 2 for Next time`: short, because an SMS is paid by the segment. */
export function renderPollAsText(
  poll: Pick<OutboundPoll, 'question' | 'options' | 'language' | 'firstNumber'>,
  messages?: MessageCatalogue,
): string {
  return `${poll.question}\n${numberedPollInstruction(poll.options, poll.language, messages, poll.firstNumber)}`;
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
