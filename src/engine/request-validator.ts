/**
 * Checks, and in production repairs, the shape of a chat request just before it goes to the model. The context
 * builder already produces valid requests; this guard is the last line of defence against a bug anywhere upstream,
 * loud under test (`throw`) and forgiving in production (`repair` + a log line).
 *
 * Rules (numbered as in the context builder):
 * 1. System messages only at the start, contiguous.
 * 2. The first non-system message is a user message.
 * 3. Every assistant tool call is followed by exactly one tool result per call id, in call order, with nothing in
 *    between; no tool result without its call.
 * 5. No assistant message with neither text nor tool calls.
 */
import { AppError } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import type { ChatMessage, LlmToolCall } from '../llm/llm.ts';

/** Stands in for a tool result that is missing, so the model still sees one answer per call. */
export const MISSING_TOOL_RESULT_PLACEHOLDER = '(no result: the tool call was not executed)';
/** Stands in for an empty tool result; some providers reject empty tool messages. */
export const EMPTY_TOOL_RESULT_PLACEHOLDER = '(no output)';

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

function toolCallsOf(message: ChatMessage): LlmToolCall[] {
  return message.role === 'assistant' ? (message.toolCalls ?? []) : [];
}

/** Rule 5: an assistant message with neither text nor tool calls says nothing. */
export function isEmptyAssistantMessage(message: ChatMessage): boolean {
  return message.role === 'assistant' && message.content.trim() === '' && toolCallsOf(message).length === 0;
}

function systemViolations(messages: readonly ChatMessage[]): string[] {
  const firstOther = messages.findIndex((message) => message.role !== 'system');
  if (firstOther === -1) return [];
  const violations: string[] = [];
  messages.forEach((message, index) => {
    if (index > firstOther && message.role === 'system') {
      violations.push(`message ${index}: system message after the conversation started`);
    }
  });
  return violations;
}

function firstMessageViolations(messages: readonly ChatMessage[]): string[] {
  const first = messages.findIndex((message) => message.role !== 'system');
  if (first === -1) return ['no user message'];
  const role = messages[first]?.role;
  return role === 'user' ? [] : [`message ${first}: the first non-system message is ${role}, not user`];
}

function toolExchangeViolations(messages: readonly ChatMessage[]): string[] {
  const violations: string[] = [];
  let index = 0;
  while (index < messages.length) {
    const message = messages[index]!;
    const calls = toolCallsOf(message);
    if (message.role === 'tool') {
      violations.push(`message ${index}: tool result for ${message.toolCallId} does not follow its tool call`);
      index += 1;
      continue;
    }
    const callIndex = index;
    index += 1;
    for (const call of calls) {
      const result = messages[index];
      if (result?.role === 'tool' && result.toolCallId === call.id) {
        index += 1;
      } else {
        violations.push(`message ${callIndex}: tool call ${call.id} (${call.name}) is not answered in order`);
      }
    }
  }
  return violations;
}

function emptyAssistantViolations(messages: readonly ChatMessage[]): string[] {
  return messages.flatMap((message, index) =>
    isEmptyAssistantMessage(message) ? [`message ${index}: assistant message with no content and no tool calls`] : [],
  );
}

/** Lists every violation of rules 1, 2, 3 and 5; an empty list means the request is well formed. */
export function validateChatRequest(messages: readonly ChatMessage[]): string[] {
  return [
    ...systemViolations(messages),
    ...firstMessageViolations(messages),
    ...toolExchangeViolations(messages),
    ...emptyAssistantViolations(messages),
  ];
}

function toolResult(toolCallId: string, content: string): ToolMessage {
  return { role: 'tool', toolCallId, content: content.trim() === '' ? EMPTY_TOOL_RESULT_PLACEHOLDER : content };
}

/**
 * Rule 3 by construction: each assistant tool-call message is followed by one result per call, in call order. A
 * result belongs to the nearest preceding tool-call message with its id, as long as no other message came in
 * between (providers that reuse ids across rounds stay correct); results found there are reordered, missing ones
 * get {@link MISSING_TOOL_RESULT_PLACEHOLDER}, and duplicates and orphans are dropped. Empty assistant messages are
 * dropped and empty results get {@link EMPTY_TOOL_RESULT_PLACEHOLDER}. Ids, arguments and contents are copied
 * unchanged. Other messages keep their relative order.
 */
export function pairToolResults(messages: readonly ChatMessage[]): ChatMessage[] {
  const output: ChatMessage[] = [];
  let open: { call: AssistantMessage; results: Map<string, string> } | undefined;
  const close = () => {
    if (!open) return;
    output.push(open.call);
    for (const call of open.call.toolCalls ?? []) {
      output.push(toolResult(call.id, open.results.get(call.id) ?? MISSING_TOOL_RESULT_PLACEHOLDER));
    }
    open = undefined;
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      const answers = open?.call.toolCalls?.some((call) => call.id === message.toolCallId);
      if (open && answers && !open.results.has(message.toolCallId))
        open.results.set(message.toolCallId, message.content);
      continue;
    }
    close();
    if (isEmptyAssistantMessage(message)) continue;
    if (message.role === 'assistant' && toolCallsOf(message).length > 0) {
      open = { call: { ...message, toolCalls: message.toolCalls!.map((call) => ({ ...call })) }, results: new Map() };
    } else {
      output.push({ ...message });
    }
  }
  close();
  return output;
}

/**
 * Repairs a request so that {@link validateChatRequest} finds nothing: system messages move to the top (in their
 * order), tool exchanges are paired ({@link pairToolResults}), and leading assistant messages are dropped so a
 * user message comes first.
 */
export function repairChatRequest(messages: readonly ChatMessage[]): ChatMessage[] {
  const system = messages.filter((message) => message.role === 'system').map((message) => ({ ...message }));
  const conversation = pairToolResults(messages.filter((message) => message.role !== 'system'));
  const firstUser = conversation.findIndex((message) => message.role === 'user');
  return [...system, ...(firstUser === -1 ? conversation : conversation.slice(firstUser))];
}

export interface RequestGuardOptions {
  /** `throw` under test and in development; `repair` in production. */
  mode: 'throw' | 'repair';
  /** The guard only warns. */
  log: Pick<Log, 'warn'>;
}

/** Returns the request unchanged when valid; otherwise throws or repairs, per {@link RequestGuardOptions.mode}. */
export type RequestGuard = (messages: ChatMessage[], context?: { purpose?: string }) => ChatMessage[];

/**
 * Creates the guard applied to every request before `llm.chat`. A request without any user message cannot be
 * repaired (there is nothing to say on the participant's behalf) and is passed on as it is, with a log line.
 */
export function createRequestGuard(options: RequestGuardOptions): RequestGuard {
  return (messages, context = {}) => {
    const violations = validateChatRequest(messages);
    if (violations.length === 0) return messages;
    if (options.mode === 'throw') {
      throw new AppError('internal', `Invalid chat request: ${violations.join('; ')}`, {
        details: { violations, ...context },
      });
    }
    const repaired = repairChatRequest(messages);
    const remaining = validateChatRequest(repaired);
    options.log.warn({ violations, remaining, ...context }, 'chat request repaired');
    return repaired;
  };
}
