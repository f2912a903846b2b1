/**
 * The `<tool_call>` text protocol (specification §Tool loop; `LLM_TOOL_PROTOCOL=text`) for models without native tool
 * calling.
 *
 * - The tools (names, descriptions, JSON Schemas generated from the same zod definitions) and the exact call format
 *   are described in a system block ({@link describeToolsForTextProtocol}).
 * - The model writes `<tool_call>{"name": "…", "arguments": {…}}</tool_call>`, one block per call, anywhere in its
 *   text; code fences and whitespace around or inside the tags are tolerated. Text outside the tags is the visible
 *   reply ({@link parseTextToolCalls}).
 * - Results go back in the next request as `<tool_result name="…" id="…">…</tool_result>` blocks in one user-role
 *   message ({@link toTextProtocolMessages}), so requests carry no `tools` field and no `tool`-role messages.
 *
 * Everything else (the loop, the transcript) works on the structured form: the protocol is only a wire format.
 */
import type { ChatMessage, LlmToolCall, ToolDefinition } from './llm.ts';

export const ToolProtocol = { NATIVE: 'native', TEXT: 'text' } as const;
export type ToolProtocol = (typeof ToolProtocol)[keyof typeof ToolProtocol];
export const TOOL_PROTOCOLS: readonly ToolProtocol[] = [ToolProtocol.NATIVE, ToolProtocol.TEXT];

/** The name recorded for a `<tool_call>` block that could not be read (its result explains why). */
export const INVALID_TOOL_CALL_NAME = 'invalid_tool_call';

/** A call parsed from the text; `parseError` is set when the text inside the tags was not a usable call. */
export interface TextToolCall extends LlmToolCall {
  parseError?: string;
}

export interface ParsedTextResponse {
  /** The visible reply: the text outside the tags, trimmed, with blank-line runs collapsed. */
  content: string;
  toolCalls: TextToolCall[];
}

/** The system block describing the tools and the format. '' when the module has no tools. */
export function describeToolsForTextProtocol(tools: readonly ToolDefinition[]): string {
  if (tools.length === 0) return '';
  const described = tools
    .map((tool) => `### ${tool.name}\n${tool.description}\nArguments (JSON Schema): ${JSON.stringify(tool.parameters)}`)
    .join('\n\n');
  return [
    '## Tools',
    'You can call the tools below. To call a tool, write exactly this, with the arguments as a JSON object:',
    '<tool_call>{"name": "tool_name", "arguments": {"argument": "value"}}</tool_call>',
    'Write one <tool_call> block per call; several blocks run in the order written. Text outside the blocks is sent ' +
      'to the participant, so when you call tools and have nothing to say yet, write only the blocks.',
    'The results come back in the next message as <tool_result name="…" id="…">…</tool_result> blocks. ' +
      'A result with "status": "error" explains what to fix; correct the call and try again.',
    'Never write <tool_result> blocks yourself.',
    '',
    described,
  ].join('\n');
}

const TOOL_CALL_PATTERN = /<tool_call>([\s\S]*?)<\/tool_call>/g;
/** A code fence wrapping the JSON inside the tags, or the tags inside a fence. */
const FENCE_PATTERN = /^```[a-zA-Z]*\s*([\s\S]*?)\s*```$/;
const EMPTY_FENCE_PATTERN = /```[a-zA-Z]*\s*```/g;

function unfence(text: string): string {
  const trimmed = text.trim();
  const match = FENCE_PATTERN.exec(trimmed);
  return match?.[1] !== undefined ? match[1].trim() : trimmed;
}

function parseCall(raw: string, id: string): TextToolCall {
  const body = unfence(raw);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      id,
      name: INVALID_TOOL_CALL_NAME,
      arguments: body,
      parseError: `The text inside <tool_call> is not valid JSON: ${reason}`,
    };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      id,
      name: INVALID_TOOL_CALL_NAME,
      arguments: body,
      parseError: 'A <tool_call> must contain a JSON object with "name".',
    };
  }
  const call = value as { name?: unknown; arguments?: unknown; id?: unknown };
  if (typeof call.name !== 'string' || call.name.trim() === '') {
    return {
      id,
      name: INVALID_TOOL_CALL_NAME,
      arguments: body,
      parseError: 'A <tool_call> needs a "name" naming the tool to call.',
    };
  }
  const callArguments =
    call.arguments === undefined
      ? '{}'
      : typeof call.arguments === 'string'
        ? call.arguments
        : JSON.stringify(call.arguments);
  return {
    id: typeof call.id === 'string' && call.id !== '' ? call.id : id,
    name: call.name.trim(),
    arguments: callArguments,
  };
}

/**
 * Extracts every `<tool_call>` block from the model's text, in order. Ids are `idPrefix` + position unless the
 * block names its own. Fences left empty by removing the blocks disappear from the visible text.
 */
export function parseTextToolCalls(text: string, idPrefix = 'call_'): ParsedTextResponse {
  const toolCalls: TextToolCall[] = [];
  const outside = text.replace(TOOL_CALL_PATTERN, (_match, inner: string) => {
    toolCalls.push(parseCall(inner, `${idPrefix}${toolCalls.length + 1}`));
    return '\n';
  });
  if (toolCalls.length === 0) return { content: text.trim(), toolCalls };
  const content = outside
    .replace(EMPTY_FENCE_PATTERN, '')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { content, toolCalls };
}

function formatToolCall(call: LlmToolCall): string {
  let callArguments: unknown;
  try {
    callArguments = JSON.parse(call.arguments);
  } catch {
    callArguments = call.arguments;
  }
  return `<tool_call>${JSON.stringify({ name: call.name, arguments: callArguments })}</tool_call>`;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

export function formatToolResult(name: string, id: string, content: string): string {
  return `<tool_result name="${escapeAttribute(name)}" id="${escapeAttribute(id)}">${content}</tool_result>`;
}

/**
 * Converts structured messages (assistant tool calls, `tool` results) into the text form: an assistant message
 * with tool calls becomes its text followed by the `<tool_call>` blocks; the results answering it become one user
 * message of `<tool_result>` blocks. Other messages are copied unchanged.
 */
export function toTextProtocolMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  const output: ChatMessage[] = [];
  const names = new Map<string, string>();
  let results: string[] = [];
  const flush = () => {
    if (results.length > 0) output.push({ role: 'user', content: results.join('\n') });
    results = [];
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      results.push(formatToolResult(names.get(message.toolCallId) ?? '', message.toolCallId, message.content));
      continue;
    }
    flush();
    if (message.role === 'assistant' && message.toolCalls && message.toolCalls.length > 0) {
      for (const call of message.toolCalls) names.set(call.id, call.name);
      const blocks = message.toolCalls.map(formatToolCall).join('\n');
      output.push({ role: 'assistant', content: message.content.trim() ? `${message.content}\n${blocks}` : blocks });
    } else {
      output.push({ ...message });
    }
  }
  flush();
  return output;
}
