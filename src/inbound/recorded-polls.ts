/**
 * Polls as the transcript records them, and how channels without native polls number their options.
 *
 * Numbering: polls sent one right after another (the Done poll, then the intensity poll on a prompt day) form a run
 * and are numbered on: `Reply 1 for Done, 2 for Next time`, then `Reply 3 for Decrease, 4 for Keep current, 5 for
 * Increase`. So a bare number names exactly one option of the run, whichever poll the participant answers. A run ends
 * at any other message; the next run starts again at 1.
 */
import type { NewTranscriptEntry } from '../store/ports/conversation-store.ts';

export interface RecordedPoll {
  /** The poll's outbound id. */
  id: string;
  question: string;
  options: string[];
}

/**
 * Reads a poll back from its transcript entry, which the outbox records as `question [option | option]`
 * (`describeOutgoing`). Undefined when the entry is not in that shape.
 */
export function parseRecordedPoll(id: string, content: string): RecordedPoll | undefined {
  const match = /^([\s\S]*) \[([\s\S]*)\]$/.exec(content);
  if (!match?.[1] || match[2] === undefined) return undefined;
  return { id, question: match[1], options: match[2].split(' | ') };
}

type Entry = Pick<NewTranscriptEntry, 'role' | 'kind' | 'content' | 'outboundId'>;

function pollOf(entry: Entry): RecordedPoll | undefined {
  if (entry.role !== 'assistant' || entry.kind !== 'poll' || !entry.outboundId) return undefined;
  return parseRecordedPoll(entry.outboundId, entry.content);
}

/** The number of the first option of a poll sent now, after `entries` (oldest first): 1 unless it continues a run. */
export function nextPollNumber(entries: readonly Entry[]): number {
  let next = 1;
  for (let index = entries.length - 1; index >= 0; index -= 1) {
    const poll = pollOf(entries[index] as Entry);
    if (!poll) break;
    next += poll.options.length;
  }
  return next;
}

/** Whether every one of `entries` is a poll: then a run of polls may start before them. */
export function onlyPolls(entries: readonly Entry[]): boolean {
  return entries.every((entry) => pollOf(entry) !== undefined);
}

/** The last run of consecutive polls sent since the participant last wrote, oldest first (empty when none). */
export function latestPollRun(entries: readonly Entry[]): RecordedPoll[] {
  const lastUser = entries.findLastIndex((entry) => entry.role === 'user');
  let run: RecordedPoll[] = [];
  let current: RecordedPoll[] = [];
  for (const entry of entries.slice(lastUser + 1)) {
    const poll = pollOf(entry);
    if (!poll) {
      current = [];
      continue;
    }
    if (current.length === 0) run = current;
    current.push(poll);
  }
  return run;
}

/** The option a number names in a run numbered on (see above), or undefined when it names none. */
export function optionByNumber(
  number: number,
  run: readonly RecordedPoll[],
): { poll: RecordedPoll; option: string } | undefined {
  let first = 1;
  for (const poll of run) {
    const option = poll.options[number - first];
    if (number >= first && option !== undefined) return { poll, option };
    first += poll.options.length;
  }
  return undefined;
}
