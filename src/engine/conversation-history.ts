/**
 * The working history (`conversationHistory`, last 50 messages). The full transcript is written separately and
 * never trimmed; this is only the model's short-term memory.
 */
import { DataKey } from '../domain/data-keys.ts';
import {
  type ConversationMessage,
  isConversationMessage,
  MAX_STORED_HISTORY,
  parseHistory,
} from '../domain/history.ts';
import { setMostRecent } from '../store/recently-used.ts';
import type { StoreRepositories } from '../store/store.ts';
import { readValue, writeData } from './participant-data.ts';

type Repositories = Pick<StoreRepositories, 'flowStates'>;

/**
 * Each participant's history as last parsed or written, with the stored text it came from and, once appended to,
 * each message's JSON. A turn reads its participant's history three times (the context, and before each append),
 * ≈ 10 kB of JSON each time, and what one append writes is what the next read finds; an append writes the stored
 * text from the kept messages' JSON instead of serialising all fifty again. The text is checked on every read (the
 * same string object, so one comparison), so a history written elsewhere is parsed anew. Messages are frozen, shared.
 */
interface ParsedHistory {
  raw: string;
  messages: readonly ConversationMessage[];
  /** `JSON.stringify` of each message, when known. */
  encoded?: readonly string[];
}

const parsedHistories = new Map<string, ParsedHistory>();
/** Participants kept, the least recently used dropped: those whose turns are in flight. ≈ 25 kB each. */
const PARSED_HISTORY_CAPACITY = 256;
const NO_HISTORY: ParsedHistory = { raw: '', messages: [], encoded: [] };

function rememberParsed(participantId: string, parsed: ParsedHistory): void {
  setMostRecent(parsedHistories, participantId, parsed, PARSED_HISTORY_CAPACITY);
}

async function storedHistory(repositories: Repositories, participantId: string): Promise<ParsedHistory> {
  const raw = await readValue(repositories, participantId, DataKey.conversationHistory);
  if (!raw) return NO_HISTORY;
  const cached = parsedHistories.get(participantId);
  if (cached?.raw === raw) return cached;
  // Just parsed: nobody else holds these objects, so they are frozen as they are.
  const messages = Object.freeze(parseHistory(raw).messages.map((message) => Object.freeze(message)));
  const parsed = { raw, messages };
  rememberParsed(participantId, parsed);
  return parsed;
}

export async function readHistory(repositories: Repositories, participantId: string): Promise<ConversationMessage[]> {
  return [...(await storedHistory(repositories, participantId)).messages];
}

/**
 * Appends messages and keeps the last 50. The stored text is what `JSON.stringify({ messages })` gives for the kept
 * messages; parsing it back drops any that are not a user or assistant message, and so does what is kept here.
 */
export async function appendToHistory(
  repositories: Repositories,
  participantId: string,
  messages: ConversationMessage[],
  now: Date,
): Promise<void> {
  const current = await storedHistory(repositories, participantId);
  const all = [...current.messages, ...messages];
  const encoded = [
    ...(current.encoded ?? current.messages.map((message) => JSON.stringify(message))),
    ...messages.map((message) => JSON.stringify(message)),
  ];
  const first = Math.max(0, all.length - MAX_STORED_HISTORY);
  const raw = `{"messages":[${encoded.slice(first).join(',')}]}`;
  await writeData(repositories, participantId, { [DataKey.conversationHistory]: raw }, now);
  const kept: ConversationMessage[] = [];
  const keptEncoded: string[] = [];
  for (let index = first; index < all.length; index += 1) {
    const message = all[index] as ConversationMessage;
    if (!isConversationMessage(message)) continue;
    // The caller's own objects stay theirs: a new message is copied before it is frozen.
    kept.push(Object.isFrozen(message) ? message : Object.freeze({ ...message }));
    keptEncoded.push(encoded[index] as string);
  }
  rememberParsed(participantId, { raw, messages: Object.freeze(kept), encoded: keptEncoded });
}
