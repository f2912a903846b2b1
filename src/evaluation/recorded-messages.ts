/** The OpenAI wire shape of a recorded request's messages, back into the LLM port's `ChatMessage`s (for the guard). */
import type { ChatMessage } from '../llm/llm.ts';
import type { RecordedExchange } from './recording-proxy.ts';

type WireMessage = NonNullable<RecordedExchange['request']['messages']>[number];

export function toChatMessages(messages: readonly WireMessage[]): ChatMessage[] {
  return messages.map((message): ChatMessage => {
    const content = message.content ?? '';
    if (message.role === 'system') return { role: 'system', content };
    if (message.role === 'tool') return { role: 'tool', toolCallId: message.tool_call_id ?? '', content };
    if (message.role === 'assistant') {
      const calls = (message.tool_calls ?? []) as { id?: string; function?: { name?: string; arguments?: string } }[];
      return calls.length === 0
        ? { role: 'assistant', content }
        : {
            role: 'assistant',
            content,
            toolCalls: calls.map((call) => ({
              id: call.id ?? '',
              name: call.function?.name ?? '',
              arguments: call.function?.arguments ?? '',
            })),
          };
    }
    return { role: 'user', content };
  });
}
