import { describe, expect, it } from 'vitest';
import { createFakeLlm } from '../../src/llm/fake-llm.ts';
import {
  formatToolResult,
  INVALID_TOOL_CALL_NAME,
  parseTextToolCalls,
  toTextProtocolMessages,
} from '../../src/llm/text-tool-protocol.ts';

describe('parseTextToolCalls', () => {
  it('returns plain text unchanged when there is no call', () => {
    expect(parseTextToolCalls('  Hello there!  ')).toEqual({ content: 'Hello there!', toolCalls: [] });
  });

  it('extracts several calls in order and keeps the text outside the tags as the visible reply', () => {
    const parsed = parseTextToolCalls(
      'Great, saving that.\n<tool_call>{"name": "save_user_profile", "arguments": {"habit_domain": "sleep"}}</tool_call>\n' +
        '<tool_call> {"name":"scheduler","arguments":{"action":"create","fixed_time":"08:00"}} </tool_call>\nSee you!',
      'call_2_',
    );
    expect(parsed.content).toBe('Great, saving that.\n\nSee you!');
    expect(parsed.toolCalls).toEqual([
      { id: 'call_2_1', name: 'save_user_profile', arguments: '{"habit_domain":"sleep"}' },
      { id: 'call_2_2', name: 'scheduler', arguments: '{"action":"create","fixed_time":"08:00"}' },
    ]);
  });

  it('tolerates code fences inside and around the tags', () => {
    const inside = parseTextToolCalls('<tool_call>\n```json\n{"name": "a", "arguments": {"x": 1}}\n```\n</tool_call>');
    expect(inside).toEqual({ content: '', toolCalls: [{ id: 'call_1', name: 'a', arguments: '{"x":1}' }] });
    const around = parseTextToolCalls('```\n<tool_call>{"name": "a"}</tool_call>\n```');
    expect(around).toEqual({ content: '', toolCalls: [{ id: 'call_1', name: 'a', arguments: '{}' }] });
  });

  it('turns bad JSON, a missing name and a non-object into calls carrying the problem', () => {
    const parsed = parseTextToolCalls(
      '<tool_call>{"name": "a", "arguments": {</tool_call><tool_call>{"arguments": {}}</tool_call><tool_call>[1]</tool_call>',
    );
    expect(parsed.toolCalls.map((call) => call.name)).toEqual([
      INVALID_TOOL_CALL_NAME,
      INVALID_TOOL_CALL_NAME,
      INVALID_TOOL_CALL_NAME,
    ]);
    expect(parsed.toolCalls[0]?.parseError).toContain('not valid JSON');
    expect(parsed.toolCalls[1]?.parseError).toContain('"name"');
    expect(parsed.toolCalls[2]?.parseError).toContain('JSON object');
  });

  it('keeps arguments given as a JSON string as they are', () => {
    expect(
      parseTextToolCalls('<tool_call>{"name": "a", "arguments": "{\\"x\\": 1}"}</tool_call>').toolCalls[0],
    ).toEqual({ id: 'call_1', name: 'a', arguments: '{"x": 1}' });
  });
});

describe('toTextProtocolMessages', () => {
  it('writes calls as tags and their results as one user message; round-trips through the parser', () => {
    const messages = toTextProtocolMessages([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c1', name: 'a', arguments: '{"x":1}' },
          { id: 'c2', name: 'b', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'c1', content: 'one' },
      { role: 'tool', toolCallId: 'c2', content: 'two' },
    ]);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(parseTextToolCalls(messages[1]?.content ?? '').toolCalls.map((call) => [call.name, call.arguments])).toEqual(
      [
        ['a', '{"x":1}'],
        ['b', '{}'],
      ],
    );
    expect(messages[2]?.content).toBe(`${formatToolResult('a', 'c1', 'one')}\n${formatToolResult('b', 'c2', 'two')}`);
  });

  it('escapes attribute values', () => {
    expect(formatToolResult('a"b', '<id>', 'x')).toBe('<tool_result name="a&quot;b" id="&lt;id>">x</tool_result>');
  });
});

describe('fake LLM in text-protocol form', () => {
  it('writes scripted tool calls as <tool_call> blocks and returns no structured calls', async () => {
    const llm = createFakeLlm([{ content: 'Saving.', toolCalls: [{ name: 'a', arguments: { x: 1 } }] }], {
      toolProtocol: 'text',
    });
    const response = await llm.chat({ messages: [{ role: 'user', content: 'hi' }] });
    expect(response.toolCalls).toEqual([]);
    expect(response.content).toBe('Saving.\n<tool_call>{"name":"a","arguments":{"x":1}}</tool_call>');
    expect(parseTextToolCalls(response.content).toolCalls).toEqual([{ id: 'call_1', name: 'a', arguments: '{"x":1}' }]);
  });
});
