/**
 * The working history (`conversationHistory`, last 50 messages). The full transcript is written separately and
 * never trimmed; this is only the model's short-term memory.
 */
import { DataKey } from '../domain/data-keys.ts';
import { type ConversationMessage, MAX_STORED_HISTORY, parseHistory, trimHistory } from '../domain/history.ts';
import type { StoreRepositories } from '../store/store.ts';
import { readValue, writeData } from './participant-data.ts';

type Repositories = Pick<StoreRepositories, 'flowStates'>;

export async function readHistory(repositories: Repositories, participantId: string): Promise<ConversationMessage[]> {
  return parseHistory(await readValue(repositories, participantId, DataKey.conversationHistory)).messages;
}

/** Appends messages and keeps the last 50. */
export async function appendToHistory(
  repositories: Repositories,
  participantId: string,
  messages: ConversationMessage[],
  now: Date,
): Promise<void> {
  const history = parseHistory(await readValue(repositories, participantId, DataKey.conversationHistory));
  const trimmed = trimHistory({ messages: [...history.messages, ...messages] }, MAX_STORED_HISTORY);
  await writeData(repositories, participantId, { [DataKey.conversationHistory]: JSON.stringify(trimmed) }, now);
}
