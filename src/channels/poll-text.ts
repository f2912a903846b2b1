/**
 * Polls on channels without native polls: the question followed by numbered options. The reverse (a reply that is
 * exactly an option's number or text becomes the structured poll answer) is `inbound/poll-answer-matching.ts`.
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
