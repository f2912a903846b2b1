/**
 * The fixed texts the channel layer itself sends or writes. What is sent comes from the message catalogue in the
 * participant's language (`notice.optOut`, `notice.optIn`, `poll.numberedInstruction` / `poll.numberedChoice`); these
 * are the English texts (equal to `catalogues/en.json`, a test checks it).
 */
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';

/** Sent once when a participant opts out, unless the channel confirms opt-outs itself (Twilio SMS). */
export const OPT_OUT_CONFIRMATION =
  'You have been unsubscribed and will not receive further messages. Reply START to join again.';

/** Sent when an opted-out participant comes back with START. */
export const OPT_IN_CONFIRMATION =
  'Welcome back! You will receive messages from this study again. Reply STOP to unsubscribe.';

/**
 * `Reply 1 for Done, 2 for Next time` (`Responde 1 para Hecho, 2 para La próxima vez`): how a channel without polls
 * asks for the answer, in the participant's language (English by default).
 */
export function numberedPollInstruction(
  options: readonly string[],
  language?: string,
  messages: MessageCatalogue = createBuiltInMessageCatalogue(),
  firstNumber = 1,
): string {
  const choices = options
    .map((option, index) => messages.t(language, 'poll.numberedChoice', { number: firstNumber + index, option }))
    .join(', ');
  return messages.t(language, 'poll.numberedInstruction', { choices });
}
