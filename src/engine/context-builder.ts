/**
 * The one place where every LLM request of a conversation turn is assembled ("one place, one time"): nothing else
 * adds, drops or reorders messages, and this is the only place a synthetic user message is ever made.
 *
 * Layout: [system prompt] [language instruction] [context blocks] [tone guide] [chat history] [user message]
 *         [this loop's tool exchange]
 *
 * Guarantees of the result:
 * 1. System content only at the start, contiguous; blank blocks are left out.
 * 2. The first and the last non-system message before this loop's tool exchange are user messages.
 * 3. Every assistant tool call is followed by exactly one tool result per call id, in call order, with nothing in
 *    between; no orphan results; ids and arguments are passed through byte-exact.
 * 4. History is windowed by whole turns (a turn starts at a user message).
 * 5. No empty assistant messages; an empty tool result reads `(no output)`.
 * 6. The current inbound message appears exactly once.
 */

import { AppError } from '../domain/errors.ts';
import type { ConversationMessage } from '../domain/history.ts';
import { languageInstruction } from '../domain/language.ts';
import type { ChatMessage, ToolDefinition } from '../llm/llm.ts';
import { describeToolsForTextProtocol, type ToolProtocol, toTextProtocolMessages } from '../llm/text-tool-protocol.ts';
import { pairToolResults } from './request-validator.ts';

/** Used when no user message exists for this turn and the caller gave no synthetic one. */
export const DEFAULT_SYNTHETIC_USER_MESSAGE =
  '(The participant has not sent a new message. Continue the conversation.)';
/**
 * Opens a conversation whose stored history starts with the assistant (the enrollment greeting answered a
 * synthetic hint that was never stored): without it the greeting — the question the participant is answering —
 * would have to be dropped to keep the first non-system message a user message.
 */
export const CONVERSATION_OPENED_MESSAGE = '(The participant joined the conversation.)';
/** Stands in for a user message without text (for example a bare media message). */
export const EMPTY_USER_MESSAGE_PLACEHOLDER = '(empty message)';

export interface ChatMessagesInput {
  systemPrompt: string;
  /**
   * The participant's language (BCP 47): any language but English adds the instruction to write in it right after
   * the system prompt. Absent → no instruction (English).
   */
  language?: string | undefined;
  /** Further system blocks after the prompt: the context block, the participant background… */
  contextBlocks: readonly string[];
  /** From `buildToneGuide`; '' when no tone tag is active. */
  toneGuide: string;
  /**
   * The working history, oldest first, as persisted BEFORE this turn: it should not contain the current inbound
   * message. Defensively, if its last entry is a user message with exactly `userMessage.content` (a real one),
   * that entry is taken to be the current message and is not repeated.
   */
  history: readonly ConversationMessage[];
  /**
   * This turn's user message. `synthetic: true` marks a hint made up by the caller (an enrollment greeting
   * request, a "write the prompt now" instruction): it is placed like a user message and must never be
   * persisted. `undefined`: no message this turn; the history's last user message stands, or
   * {@link DEFAULT_SYNTHETIC_USER_MESSAGE} is added when the history does not end with one.
   */
  userMessage: { content: string; synthetic: boolean } | undefined;
  /** This loop's assistant tool calls and tool results so far, in the order they happened. */
  loopMessages: readonly ChatMessage[];
  /** Most history messages to consider, before aligning to a turn start; -1 → all, 0 → none. */
  historyLimit: number;
  /**
   * `LLM_TOOL_PROTOCOL`; default `native`. In `text` mode the tools are described in a system block after the
   * context blocks and this loop's exchange is written as `<tool_call>` / `<tool_result>` text (see
   * `text-tool-protocol.ts`): the request then holds no tool-role messages and no structured tool calls.
   */
  toolProtocol?: ToolProtocol;
  /** The module's tools, described in the system prompt in `text` mode (ignored in `native` mode). */
  tools?: readonly ToolDefinition[];
}

/** Blank blocks are dropped; the rest are system messages in the given order. */
function systemMessages(input: ChatMessagesInput): ChatMessage[] {
  const toolBlock = input.toolProtocol === 'text' ? describeToolsForTextProtocol(input.tools ?? []) : '';
  const language = input.language ? languageInstruction(input.language) : '';
  return [input.systemPrompt, language, ...input.contextBlocks, toolBlock, input.toneGuide]
    .filter((block) => block.trim() !== '')
    .map((content) => ({ role: 'system', content }));
}

function isCurrentMessageEcho(entry: ConversationMessage | undefined, input: ChatMessagesInput): boolean {
  const current = input.userMessage;
  return current !== undefined && !current.synthetic && entry?.role === 'user' && entry.content === current.content;
}

/**
 * Rule 4: takes the last `historyLimit` messages, then moves the start forward to the first user message, so the
 * window holds whole turns and never opens with an assistant message (which also satisfies rule 2). Blank
 * messages are dropped first and do not count.
 */
export function windowHistory(history: readonly ConversationMessage[], historyLimit: number): ConversationMessage[] {
  if (historyLimit === 0) return [];
  const spoken = history.filter((message) => message.content.trim() !== '');
  const window = historyLimit < 0 ? spoken : spoken.slice(-historyLimit);
  const turnStart = window.findIndex((message) => message.role === 'user');
  return turnStart === -1 ? [] : window.slice(turnStart);
}

/**
 * The assistant messages that open the stored history (a greeting, prompts sent before any reply), kept only when
 * the window reaches back to the very start of the conversation: a window cut in the middle starts at a turn.
 */
function openingAssistantMessages(
  history: readonly ConversationMessage[],
  historyLimit: number,
): ConversationMessage[] {
  if (historyLimit === 0) return [];
  const spoken = history.filter((message) => message.content.trim() !== '');
  if (historyLimit > 0 && spoken.length > historyLimit) return [];
  const firstUser = spoken.findIndex((message) => message.role === 'user');
  const opening = firstUser === -1 ? spoken : spoken.slice(0, firstUser);
  return historyLimit > 0 ? opening.slice(-historyLimit) : opening;
}

function currentUserMessage(input: ChatMessagesInput, history: readonly ChatMessage[]): ChatMessage[] {
  const current = input.userMessage;
  if (current === undefined) {
    return history.at(-1)?.role === 'user' ? [] : [{ role: 'user', content: DEFAULT_SYNTHETIC_USER_MESSAGE }];
  }
  if (current.content.trim() !== '') return [{ role: 'user', content: current.content }];
  return [
    { role: 'user', content: current.synthetic ? DEFAULT_SYNTHETIC_USER_MESSAGE : EMPTY_USER_MESSAGE_PLACEHOLDER },
  ];
}

/** Builds the full message list for one round of a turn's tool loop. Pure; copies everything it returns. */
export function buildChatMessages(input: ChatMessagesInput): ChatMessage[] {
  if (input.loopMessages.some((message) => message.role === 'system')) {
    throw new AppError('internal', 'loopMessages must not contain system messages');
  }
  const persisted = isCurrentMessageEcho(input.history.at(-1), input) ? input.history.slice(0, -1) : input.history;
  const opening = openingAssistantMessages(persisted, input.historyLimit);
  const windowed = [...opening, ...windowHistory(persisted, input.historyLimit)];
  const history: ChatMessage[] = [
    ...(opening.length > 0 ? [{ role: 'user' as const, content: CONVERSATION_OPENED_MESSAGE }] : []),
    ...windowed.map((message) => ({ role: message.role, content: message.content })),
  ];
  const loop = pairToolResults(input.loopMessages);
  return [
    ...systemMessages(input),
    ...history,
    ...currentUserMessage(input, history),
    ...(input.toolProtocol === 'text' ? toTextProtocolMessages(loop) : loop),
  ];
}

/**
 * For providers that accept a single system message: joins all system messages into one at the start (blocks
 * separated by a blank line), keeping every other message in order.
 */
export function mergeSystemMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  const system = messages.filter((message) => message.role === 'system').map((message) => message.content);
  const others = messages.filter((message) => message.role !== 'system').map((message) => ({ ...message }));
  return system.length === 0 ? others : [{ role: 'system', content: system.join('\n\n') }, ...others];
}
