/**
 * The working history (`conversationHistory`, last 50 messages). The full transcript is written separately and
 * never trimmed; this is only the model's short-term memory. It is stored one row per message (`store.history`,
 * migration 016): appending writes only the new messages, and older rows are deleted in batches.
 */
import { LRUCache } from 'lru-cache';
import { DataKey, type StateData } from '../domain/data-keys.ts';
import { type ConversationMessage, isConversationMessage, MAX_STORED_HISTORY } from '../domain/history.ts';
import { readData } from '../domain/participant-data.ts';
import type { StoreRepositories } from '../store/store.ts';

type Repositories = Pick<StoreRepositories, 'history'>;

/**
 * Rows beyond the newest 50 are deleted when the newest message's number is a multiple of this: one delete of up to
 * this many rows instead of one per message (a delete writes the page of the oldest rows, an append the newest).
 */
export const HISTORY_TRIM_EVERY = 10;

/**
 * Each participant's history as last read or written: the newest stored row (number and text) it ends with, its
 * messages and each one's JSON. A turn reads its participant's history three times (the context, and before each
 * append); with this, each read is one look-up of the newest row, and the messages are parsed only when that row is
 * not the one remembered. Rows of a database are only ever appended or deleted, never changed, so in the same
 * database a matching newest row means the rest matches too: a history written elsewhere (another instance, a
 * rolled-back append) is read anew. Histories are remembered per history repository (a store's, which every unit of
 * work of the store reaches through it; a transaction's own repository has its own, short-lived): two stores may
 * hold the same participant id. Messages are frozen, shared.
 */
interface ParsedHistory {
  lastSeq: number;
  lastText: string;
  messages: readonly ConversationMessage[];
  encoded: readonly string[];
}

/** By history repository, then participant; a store that is gone takes its histories with it. */
const parsedHistories = new WeakMap<object, LRUCache<string, ParsedHistory>>();
/** Participants kept per database, the least recently used dropped: those whose turns are in flight. ≈ 25 kB each. */
const PARSED_HISTORY_CAPACITY = 256;
const NO_HISTORY: ParsedHistory = { lastSeq: 0, lastText: '', messages: [], encoded: [] };

function historiesOf(repositories: Repositories): LRUCache<string, ParsedHistory> {
  let histories = parsedHistories.get(repositories.history);
  if (!histories) {
    histories = new LRUCache({ max: PARSED_HISTORY_CAPACITY });
    parsedHistories.set(repositories.history, histories);
  }
  return histories;
}

function rememberParsed(repositories: Repositories, participantId: string, parsed: ParsedHistory): void {
  historiesOf(repositories).set(participantId, parsed);
}

/** A stored message, parsed; undefined when it is not a user or assistant message (it is then left out). */
function parseMessage(text: string): ConversationMessage | undefined {
  try {
    const message: unknown = JSON.parse(text);
    return isConversationMessage(message) ? Object.freeze(message) : undefined;
  } catch {
    return undefined;
  }
}

async function storedHistory(repositories: Repositories, participantId: string): Promise<ParsedHistory> {
  const newest = await repositories.history.newest(participantId);
  if (!newest) return NO_HISTORY;
  const cached = historiesOf(repositories).get(participantId);
  if (cached && cached.lastSeq === newest.seq && cached.lastText === newest.message) return cached;
  const rows = await repositories.history.latest(participantId, MAX_STORED_HISTORY);
  const messages: ConversationMessage[] = [];
  const encoded: string[] = [];
  for (const row of rows) {
    const message = parseMessage(row.message);
    if (!message) continue;
    messages.push(message);
    encoded.push(row.message);
  }
  const last = rows.at(-1) ?? newest;
  const parsed = { lastSeq: last.seq, lastText: last.message, messages: Object.freeze(messages), encoded };
  rememberParsed(repositories, participantId, parsed);
  return parsed;
}

export async function readHistory(repositories: Repositories, participantId: string): Promise<ConversationMessage[]> {
  return [...(await storedHistory(repositories, participantId)).messages];
}

/**
 * The history as the contract's `conversationHistory` value, `{"messages":[…]}`; empty when there is none (as an
 * unset state-data key is).
 */
export async function readHistoryValue(repositories: Repositories, participantId: string): Promise<string> {
  const { encoded } = await storedHistory(repositories, participantId);
  return encoded.length === 0 ? '' : `{"messages":[${encoded.join(',')}]}`;
}

/** Appends messages (any that are not a user or assistant message are left out) and keeps the last 50. */
export async function appendToHistory(
  repositories: Repositories,
  participantId: string,
  messages: readonly ConversationMessage[],
): Promise<void> {
  // The caller's own objects stay theirs: a new message is copied before it is frozen.
  const added = messages.filter(isConversationMessage).map((message) => Object.freeze({ ...message }));
  if (added.length === 0) return;
  const current = await storedHistory(repositories, participantId);
  const addedText = added.map((message) => JSON.stringify(message));
  await repositories.history.append(participantId, current.lastSeq + 1, addedText);
  const lastSeq = current.lastSeq + added.length;
  if (Math.floor(lastSeq / HISTORY_TRIM_EVERY) > Math.floor(current.lastSeq / HISTORY_TRIM_EVERY)) {
    await repositories.history.deleteBefore(participantId, lastSeq - MAX_STORED_HISTORY + 1);
  }
  const first = Math.max(0, current.messages.length + added.length - MAX_STORED_HISTORY);
  rememberParsed(repositories, participantId, {
    lastSeq,
    lastText: addedText.at(-1) as string,
    messages: Object.freeze([...current.messages, ...added].slice(first)),
    encoded: [...current.encoded, ...addedText].slice(first),
  });
}

/**
 * `stateData` (the participant's, as read) with the working history under its contract key (first, as the original
 * stored it): what the organiser's state view shows.
 */
export async function withHistory(
  repositories: Repositories,
  participantId: string,
  stateData: StateData,
): Promise<StateData> {
  const history = await readHistoryValue(repositories, participantId);
  // A key left in the state data (written by a version before migration 016) is not the history any more.
  const { [DataKey.conversationHistory]: _stale, ...data } = stateData;
  return history ? { [DataKey.conversationHistory]: history, ...data } : data;
}

/** The participant's state data as the state view shows it ({@link withHistory}). */
export async function readDataWithHistory(
  repositories: Pick<StoreRepositories, 'history' | 'flowStates'>,
  participantId: string,
): Promise<StateData> {
  return withHistory(repositories, participantId, await readData(repositories, participantId));
}
