/**
 * The fixed texts the channel layer itself sends or writes (English; per-language catalogues build on these keys:
 * `notice.optOut`, `notice.optIn`, `poll.numberedInstruction`).
 */

/** Sent once when a participant opts out, unless the channel confirms opt-outs itself (Twilio SMS). */
export const OPT_OUT_CONFIRMATION =
  'You have been unsubscribed and will not receive further messages. Reply START to join again.';

/** Sent when an opted-out participant comes back with START. */
export const OPT_IN_CONFIRMATION =
  'Welcome back! You will receive messages from this study again. Reply STOP to unsubscribe.';

/** `Reply 1 for Done, 2 for Next time`: how a channel without polls asks for the answer. */
export function numberedPollInstruction(options: readonly string[]): string {
  return `Reply ${options.map((option, index) => `${index + 1} for ${option}`).join(', ')}`;
}
