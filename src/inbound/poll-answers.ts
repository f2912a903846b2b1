/**
 * Poll answers are resolved when the message is received, against the poll the participant was looking at (the
 * `lastPoll` data key): a native `poll_answer` gets its question; a reply that is exactly an option's number or text
 * while that poll is still open (no participant message since it was sent) becomes the structured answer
 * (poll-answer-matching.ts).
 */
import { DataKey } from '../domain/data-keys.ts';
import { readValue } from '../domain/participant-data.ts';
import type { PollAnswer } from '../domain/polls.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { Store } from '../store/store.ts';
import type { ChannelInboundMessage } from './inbound-port.ts';
import { matchTypedAnswer, type OpenPoll } from './poll-answer-matching.ts';
import { latestPollRun, parseRecordedPoll, type RecordedPoll } from './recorded-polls.ts';

/** The last poll sent (`lastPoll` data key): the poll as recorded, with its exact options. */
export type LastPoll = RecordedPoll;

/** How far back a poll counts as the one being answered; beyond it the conversation has moved on. */
const OPEN_POLL_LOOKBACK_ENTRIES = 30;
/** How far back a native answer's poll is looked up in the transcript (a few days of a study). */
const POLL_LOOKUP_ENTRIES = 200;

export function createPollAnswerResolution(options: {
  store: Store;
  messages: MessageCatalogue;
}): (participantId: string, message: ChannelInboundMessage) => Promise<PollAnswer | undefined> {
  const { store, messages } = options;

  async function readLastPoll(participantId: string): Promise<LastPoll | undefined> {
    const raw = await readValue(store, participantId, DataKey.lastPoll);
    if (!raw) return undefined;
    try {
      const value = JSON.parse(raw) as Partial<LastPoll>;
      if (typeof value.id !== 'string' || typeof value.question !== 'string' || !Array.isArray(value.options)) {
        return undefined;
      }
      return { id: value.id, question: value.question, options: value.options.filter((o) => typeof o === 'string') };
    } catch {
      return undefined;
    }
  }

  /**
   * The polls sent since the participant last wrote, among the recent transcript entries, newest first (the last
   * poll is read from `lastPoll`, exact options; earlier ones from their transcript entries), and the latest run of
   * polls sent one after another, oldest first, whose options are numbered on (recorded-polls.ts).
   */
  async function openPolls(
    participantId: string,
    lastPoll: LastPoll | undefined,
  ): Promise<{ open: OpenPoll[]; numbered: OpenPoll[] }> {
    const recent = await store.transcript.afterLastMessage(participantId, { limit: OPEN_POLL_LOOKBACK_ENTRIES });
    const open: OpenPoll[] = [];
    for (const entry of recent.toReversed()) {
      if (entry.kind !== 'poll' || !entry.outboundId) continue;
      const poll = entry.outboundId === lastPoll?.id ? lastPoll : parseRecordedPoll(entry.outboundId, entry.content);
      if (poll) open.push(poll);
    }
    const numbered = latestPollRun(recent).map((poll) => (poll.id === lastPoll?.id ? lastPoll : poll));
    return { open, numbered };
  }

  /**
   * The poll a native answer refers to: the last poll, or an earlier one (the Done poll is often followed by the
   * intensity poll, and people answer both) recovered from its transcript entry.
   */
  async function findPoll(participantId: string, pollId: string, lastPoll: LastPoll | undefined) {
    if (lastPoll?.id === pollId) return lastPoll;
    const recent = await store.transcript.list(participantId, { limit: POLL_LOOKUP_ENTRIES });
    const entry = recent.findLast((candidate) => candidate.outboundId === pollId);
    return entry ? parseRecordedPoll(pollId, entry.content) : undefined;
  }

  return async function resolvePollAnswer(participantId, message) {
    const lastPoll = await readLastPoll(participantId);
    if (message.pollAnswer) {
      const answer = message.pollAnswer;
      const poll = answer.pollId === undefined ? lastPoll : await findPoll(participantId, answer.pollId, lastPoll);
      if (!poll) return answer;
      // A reply id names the option by position: the poll's own words, even when the provider shortened the title.
      const byIndex = answer.optionIndex === undefined ? undefined : poll.options[answer.optionIndex];
      return { pollId: poll.id, question: answer.question ?? poll.question, option: byIndex ?? answer.option };
    }
    const { open, numbered } = await openPolls(participantId, lastPoll);
    return matchTypedAnswer(message.text, open, messages, numbered);
  };
}
