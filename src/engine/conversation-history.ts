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
  trimHistory,
} from '../domain/history.ts';
import type { StoreRepositories } from '../store/store.ts';
import { readValue, writeData } from './participant-data.ts';

type Repositories = Pick<StoreRepositories, 'flowStates'>;

/**
 * Each participant's history as last parsed or written, with the stored text it came from. A turn reads its
 * participant's history three times (the context, and before each append), ≈ 10 kB of JSON each time, and what one
 * append writes is what the next read finds. The text is checked on every read (the same string object, so the
 * check is one comparison), so a history written elsewhere is parsed anew. The messages are frozen and shared.
 */
const parsedHistories = new Map<string, { raw: string; messages: readonly ConversationMessage[] }>();
/** Participants kept, the least recently used dropped: those whose turns are in flight. ≈ 15 kB each. */
const PARSED_HISTORY_CAPACITY = 256;

function rememberParsed(participantId: string, raw: string, messages: readonly ConversationMessage[]): void {
  parsedHistories.delete(participantId);
  parsedHistories.set(participantId, { raw, messages });
  if (parsedHistories.size > PARSED_HISTORY_CAPACITY) {
    const oldest = parsedHistories.keys().next().value;
    if (oldest !== undefined) parsedHistories.delete(oldest);
  }
}

/** The messages frozen, each copied first unless it already is frozen (kept from an earlier parse or write). */
function frozen(messages: readonly ConversationMessage[], copy: boolean): readonly ConversationMessage[] {
  return Object.freeze(
    messages.map((message) => (Object.isFrozen(message) ? message : Object.freeze(copy ? { ...message } : message))),
  );
}

async function storedHistory(repositories: Repositories, participantId: string) {
  const raw = await readValue(repositories, participantId, DataKey.conversationHistory);
  if (!raw) return [];
  const cached = parsedHistories.get(participantId);
  if (cached?.raw === raw) return cached.messages;
  // Just parsed: nobody else holds these objects, so they are frozen as they are.
  const messages = frozen(parseHistory(raw).messages, false);
  rememberParsed(participantId, raw, messages);
  return messages;
}

export async function readHistory(repositories: Repositories, participantId: string): Promise<ConversationMessage[]> {
  return [...(await storedHistory(repositories, participantId))];
}

/** Appends messages and keeps the last 50. */
export async function appendToHistory(
  repositories: Repositories,
  participantId: string,
  messages: ConversationMessage[],
  now: Date,
): Promise<void> {
  const current = await storedHistory(repositories, participantId);
  const trimmed = trimHistory({ messages: [...current, ...messages] }, MAX_STORED_HISTORY);
  const raw = JSON.stringify(trimmed);
  await writeData(repositories, participantId, { [DataKey.conversationHistory]: raw }, now);
  // What parsing `raw` would give: the messages as written, less any that parsing would drop.
  rememberParsed(participantId, raw, frozen(trimmed.messages.filter(isConversationMessage), true));
}
