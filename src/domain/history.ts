/** One entry of the working history under `conversationHistory` (specification §Data keys, 1). */
export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: string;
  /** RFC 3339. */
  timestamp: string;
}

export interface ConversationHistory {
  messages: ConversationMessage[];
}

/** The working history keeps the most recent 50 messages; the full transcript keeps everything. */
export const MAX_STORED_HISTORY = 50;

/** Whether a stored value is a message the working history keeps (others are dropped when it is read). */
export function isConversationMessage(message: unknown): message is ConversationMessage {
  if (typeof message !== 'object' || message === null) return false;
  const { role, content } = message as { role?: unknown; content?: unknown };
  return (role === 'user' || role === 'assistant') && typeof content === 'string';
}

export function parseHistory(raw: string | undefined): ConversationHistory {
  if (!raw) return { messages: [] };
  try {
    const value: unknown = JSON.parse(raw);
    const messages = (value as { messages?: unknown })?.messages;
    if (!Array.isArray(messages)) return { messages: [] };
    return { messages: messages.filter(isConversationMessage) };
  } catch {
    return { messages: [] };
  }
}

export function trimHistory(history: ConversationHistory, max = MAX_STORED_HISTORY): ConversationHistory {
  return { messages: history.messages.slice(-max) };
}
