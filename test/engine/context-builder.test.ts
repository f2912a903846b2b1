import { describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/domain/history.ts';
import {
  buildChatMessages,
  type ChatMessagesInput,
  CONVERSATION_OPENED_MESSAGE,
  DEFAULT_SYNTHETIC_USER_MESSAGE,
  EMPTY_USER_MESSAGE_PLACEHOLDER,
  mergeSystemMessages,
  windowHistory,
} from '../../src/engine/context-builder.ts';
import {
  EMPTY_TOOL_RESULT_PLACEHOLDER,
  MISSING_TOOL_RESULT_PLACEHOLDER,
  validateChatRequest,
} from '../../src/engine/request-validator.ts';
import type { ChatMessage } from '../../src/llm/llm.ts';
import {
  parseTextToolCalls,
  TOOL_PROTOCOLS,
  type ToolProtocol,
  toTextProtocolMessages,
} from '../../src/llm/text-tool-protocol.ts';

const at = '2026-03-01T12:00:00.000Z';
const user = (content: string): ConversationMessage => ({ role: 'user', content, timestamp: at });
const assistant = (content: string): ConversationMessage => ({ role: 'assistant', content, timestamp: at });

function input(overrides: Partial<ChatMessagesInput> = {}): ChatMessagesInput {
  return {
    systemPrompt: 'You are a habit coach.',
    contextBlocks: [],
    toneGuide: '',
    history: [],
    userMessage: { content: 'hello', synthetic: false },
    loopMessages: [],
    historyLimit: -1,
    ...overrides,
  };
}

const roles = (messages: ChatMessage[]) => messages.map((message) => message.role);
const nonSystem = (messages: ChatMessage[]) => messages.filter((message) => message.role !== 'system');

describe('buildChatMessages — layout', () => {
  it('orders system prompt, context blocks, tone guide, history, user message, loop exchange', () => {
    const call = { id: 'call_1', name: 'save_user_profile', arguments: '{"habit_domain":"walking"}' };
    const messages = buildChatMessages(
      input({
        contextBlocks: ['CONTEXT', 'BACKGROUND'],
        toneGuide: '<TONE POLICY>\n- Be concise.\n</TONE POLICY>',
        history: [user('hi'), assistant('Hello! What habit?')],
        userMessage: { content: 'walking', synthetic: false },
        loopMessages: [
          { role: 'assistant', content: '', toolCalls: [call] },
          { role: 'tool', toolCallId: 'call_1', content: '{"status":"ok"}' },
        ],
      }),
    );
    expect(messages).toEqual([
      { role: 'system', content: 'You are a habit coach.' },
      { role: 'system', content: 'CONTEXT' },
      { role: 'system', content: 'BACKGROUND' },
      { role: 'system', content: '<TONE POLICY>\n- Be concise.\n</TONE POLICY>' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello! What habit?' },
      { role: 'user', content: 'walking' },
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', toolCallId: 'call_1', content: '{"status":"ok"}' },
    ]);
    expect(validateChatRequest(messages)).toEqual([]);
  });

  it('does not alias its inputs', () => {
    const history = [user('hi')];
    const loopMessages: ChatMessage[] = [
      { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'n', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c', content: 'ok' },
    ];
    const messages = buildChatMessages(input({ history, loopMessages }));
    const exchange = messages.at(-2) as Extract<ChatMessage, { role: 'assistant' }>;
    exchange.toolCalls![0]!.arguments = 'changed';
    (messages[1] as { content: string }).content = 'changed';
    expect(loopMessages[0]).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'c', name: 'n', arguments: '{}' }],
    });
    expect(history[0]!.content).toBe('hi');
  });
});

describe('guarantee 1 — system content only at the start, contiguous', () => {
  it('drops blank blocks and keeps system messages together at the top', () => {
    const messages = buildChatMessages(
      input({ systemPrompt: 'PROMPT', contextBlocks: ['', '  ', 'CONTEXT'], toneGuide: '', history: [user('a')] }),
    );
    expect(messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'PROMPT' },
      { role: 'system', content: 'CONTEXT' },
    ]);
    expect(messages.slice(2).every((message) => message.role !== 'system')).toBe(true);
  });

  it('rejects a system message smuggled into the loop exchange', () => {
    expect(() => buildChatMessages(input({ loopMessages: [{ role: 'system', content: 'late' }] }))).toThrow(
      /loopMessages must not contain system messages/,
    );
  });

  it('mergeSystemMessages joins them into one leading system message', () => {
    const messages = buildChatMessages(input({ contextBlocks: ['CONTEXT'], toneGuide: 'TONE', history: [user('a')] }));
    expect(mergeSystemMessages(messages)).toEqual([
      { role: 'system', content: 'You are a habit coach.\n\nCONTEXT\n\nTONE' },
      { role: 'user', content: 'a' },
      { role: 'user', content: 'hello' },
    ]);
    expect(mergeSystemMessages([{ role: 'user', content: 'x' }])).toEqual([{ role: 'user', content: 'x' }]);
  });
});

describe('guarantee 2 — the first and last non-system messages are user messages', () => {
  it('keeps the assistant messages that open the conversation behind a synthetic opener', () => {
    const messages = buildChatMessages(
      input({ history: [assistant('Welcome!'), assistant('What habit?'), user('walking'), assistant('Great.')] }),
    );
    expect(nonSystem(messages)).toEqual([
      { role: 'user', content: CONVERSATION_OPENED_MESSAGE },
      { role: 'assistant', content: 'Welcome!' },
      { role: 'assistant', content: 'What habit?' },
      { role: 'user', content: 'walking' },
      { role: 'assistant', content: 'Great.' },
      { role: 'user', content: 'hello' },
    ]);
  });

  it('drops leading assistant messages when the window cuts the history mid-conversation', () => {
    const messages = buildChatMessages(
      input({
        history: [user('hi'), assistant('Welcome!'), assistant('What habit?'), user('walking'), assistant('Great.')],
        historyLimit: 4,
      }),
    );
    expect(nonSystem(messages)).toEqual([
      { role: 'user', content: 'walking' },
      { role: 'assistant', content: 'Great.' },
      { role: 'user', content: 'hello' },
    ]);
  });

  it('uses a synthetic user message when there is no real one, exactly where a user message goes', () => {
    const hint = 'The participant just enrolled: greet them and start the intake.';
    const messages = buildChatMessages(input({ history: [], userMessage: { content: hint, synthetic: true } }));
    expect(nonSystem(messages)).toEqual([{ role: 'user', content: hint }]);
  });

  it('falls back to the default synthetic message when none is given and the history ends with the assistant', () => {
    const messages = buildChatMessages(input({ history: [user('hi'), assistant('Hello!')], userMessage: undefined }));
    expect(nonSystem(messages).at(-1)).toEqual({ role: 'user', content: DEFAULT_SYNTHETIC_USER_MESSAGE });
    const emptySynthetic = buildChatMessages(input({ userMessage: { content: ' ', synthetic: true } }));
    expect(nonSystem(emptySynthetic)).toEqual([{ role: 'user', content: DEFAULT_SYNTHETIC_USER_MESSAGE }]);
  });

  it('adds nothing when no message is given and the history already ends with a user message', () => {
    const messages = buildChatMessages(
      input({ history: [user('hi'), assistant('Hello!'), user('still there?')], userMessage: undefined }),
    );
    expect(nonSystem(messages).map((message) => message.content)).toEqual(['hi', 'Hello!', 'still there?']);
  });

  it('keeps consecutive user messages of the history', () => {
    const messages = buildChatMessages(input({ history: [user('one'), user('two'), assistant('ok')] }));
    expect(roles(nonSystem(messages))).toEqual(['user', 'user', 'assistant', 'user']);
  });

  it('stands in for a real message without text', () => {
    const messages = buildChatMessages(input({ userMessage: { content: '', synthetic: false } }));
    expect(nonSystem(messages)).toEqual([{ role: 'user', content: EMPTY_USER_MESSAGE_PLACEHOLDER }]);
  });
});

describe('guarantee 3 — tool calls are answered one by one, in order', () => {
  const callA = { id: 'call_a', name: 'scheduler', arguments: '{ "action":"create", "time" : "08:00" }' };
  const callB = { id: 'call_b', name: 'save_user_profile', arguments: '{"last_barrier":"rain \\u2614"}' };

  it('passes a well-formed multi-round exchange through byte-exact', () => {
    const loopMessages: ChatMessage[] = [
      { role: 'assistant', content: '', toolCalls: [callA, callB] },
      { role: 'tool', toolCallId: 'call_a', content: 'scheduled' },
      { role: 'tool', toolCallId: 'call_b', content: 'saved' },
      {
        role: 'assistant',
        content: 'Let me check.',
        toolCalls: [{ id: 'call_a', name: 'scheduler', arguments: '{}' }],
      },
      { role: 'tool', toolCallId: 'call_a', content: 'listed' },
    ];
    const messages = buildChatMessages(input({ loopMessages }));
    expect(messages.slice(-5)).toEqual(loopMessages);
    expect(validateChatRequest(messages)).toEqual([]);
  });

  it('reorders results to call order, drops orphans and duplicates, and answers missing calls', () => {
    const messages = buildChatMessages(
      input({
        loopMessages: [
          { role: 'tool', toolCallId: 'call_zzz', content: 'orphan' },
          { role: 'assistant', content: '', toolCalls: [callA, callB] },
          { role: 'tool', toolCallId: 'call_b', content: 'saved' },
          { role: 'tool', toolCallId: 'call_b', content: 'duplicate' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call_c', name: 'scheduler', arguments: '{}' }] },
        ],
      }),
    );
    expect(messages.slice(2)).toEqual([
      { role: 'assistant', content: '', toolCalls: [callA, callB] },
      { role: 'tool', toolCallId: 'call_a', content: MISSING_TOOL_RESULT_PLACEHOLDER },
      { role: 'tool', toolCallId: 'call_b', content: 'saved' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_c', name: 'scheduler', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'call_c', content: MISSING_TOOL_RESULT_PLACEHOLDER },
    ]);
    expect(validateChatRequest(messages)).toEqual([]);
  });
});

describe('guarantee 4 — history is windowed by whole turns', () => {
  const history = [
    user('u1'),
    assistant('a1'),
    user('u2'),
    assistant('a2a'),
    assistant('a2b'),
    user('u3'),
    assistant('a3'),
  ];

  it('moves a cut that lands inside a turn forward to the next turn start', () => {
    expect(windowHistory(history, 4).map((message) => message.content)).toEqual(['u3', 'a3']);
    expect(windowHistory(history, 5).map((message) => message.content)).toEqual(['u2', 'a2a', 'a2b', 'u3', 'a3']);
  });

  it('treats -1 as everything and 0 as nothing', () => {
    expect(windowHistory(history, -1)).toHaveLength(7);
    expect(windowHistory(history, 0)).toEqual([]);
    expect(nonSystem(buildChatMessages(input({ history, historyLimit: 0 })))).toEqual([
      { role: 'user', content: 'hello' },
    ]);
  });

  it('yields no history when the window holds only assistant messages', () => {
    expect(windowHistory([user('u'), assistant('a'), assistant('b')], 2)).toEqual([]);
  });

  it('applies the limit in buildChatMessages', () => {
    const messages = buildChatMessages(input({ history, historyLimit: 3 }));
    expect(nonSystem(messages).map((message) => message.content)).toEqual(['u3', 'a3', 'hello']);
  });
});

describe('guarantee 5 — no empty messages', () => {
  it('drops empty assistant messages from the history and the loop', () => {
    const messages = buildChatMessages(
      input({
        history: [user('hi'), assistant(''), assistant('  '), assistant('Hello!')],
        loopMessages: [{ role: 'assistant', content: '', toolCalls: [] }],
      }),
    );
    expect(nonSystem(messages)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'hello' },
    ]);
  });

  it('gives an empty tool result a placeholder', () => {
    const messages = buildChatMessages(
      input({
        loopMessages: [
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'n', arguments: '{}' }] },
          { role: 'tool', toolCallId: 'c1', content: '' },
        ],
      }),
    );
    expect(messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'c1', content: EMPTY_TOOL_RESULT_PLACEHOLDER });
  });
});

describe('guarantee 6 — the current message appears exactly once', () => {
  it('adds the user message after a history that does not contain it (the normal contract)', () => {
    const messages = buildChatMessages(
      input({ history: [user('yes'), assistant('Great!')], userMessage: { content: 'yes', synthetic: false } }),
    );
    expect(nonSystem(messages).map((message) => message.content)).toEqual(['yes', 'Great!', 'yes']);
  });

  it('does not repeat it when the history already ends with it', () => {
    const messages = buildChatMessages(
      input({
        history: [user('hi'), assistant('Hello!'), user('walking')],
        userMessage: { content: 'walking', synthetic: false },
      }),
    );
    expect(nonSystem(messages).map((message) => message.content)).toEqual(['hi', 'Hello!', 'walking']);
  });

  it('never treats a history entry as a synthetic message', () => {
    const messages = buildChatMessages(
      input({ history: [user('go')], userMessage: { content: 'go', synthetic: true } }),
    );
    expect(nonSystem(messages).map((message) => message.content)).toEqual(['go', 'go']);
  });

  it('does not count the echoed message against the history limit', () => {
    const messages = buildChatMessages(
      input({
        history: [user('u1'), assistant('a1'), user('now')],
        userMessage: { content: 'now', synthetic: false },
        historyLimit: 2,
      }),
    );
    expect(nonSystem(messages).map((message) => message.content)).toEqual(['u1', 'a1', 'now']);
  });
});

describe.each(TOOL_PROTOCOLS)('every built request is valid (LLM_TOOL_PROTOCOL=%s)', (toolProtocol) => {
  /** A small deterministic generator, so a failure reproduces. */
  function random(seed: number) {
    let state = seed;
    return (below: number) => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state % below;
    };
  }

  it('holds for 500 generated histories, limits and loop exchanges', () => {
    for (let seed = 1; seed <= 500; seed += 1) {
      const next = random(seed);
      const history = Array.from({ length: next(12) }, (_, index) =>
        next(2) === 0 ? user(next(5) === 0 ? '' : `u${index}`) : assistant(next(5) === 0 ? '' : `a${index}`),
      );
      const loopMessages: ChatMessage[] = [];
      for (let round = 0; round < next(3); round += 1) {
        const ids = Array.from({ length: 1 + next(3) }, (_, index) => `call_${round}_${index}`);
        loopMessages.push({
          role: 'assistant',
          content: '',
          toolCalls: ids.map((id) => ({ id, name: 't', arguments: '{}' })),
        });
        for (const id of ids)
          if (next(4) !== 0) loopMessages.push({ role: 'tool', toolCallId: id, content: next(3) === 0 ? '' : 'ok' });
      }
      const userMessage = next(3) === 0 ? undefined : { content: 'now', synthetic: next(2) === 0 };
      const historyLimit = next(8) - 1;
      const messages = buildChatMessages(
        input({ history, loopMessages, userMessage, historyLimit, toolProtocol, tools: TOOLS }),
      );
      expect(validateChatRequest(messages), `seed ${seed}`).toEqual([]);
      if (toolProtocol === 'text') {
        expect(textProtocolViolations(messages), `seed ${seed}`).toEqual([]);
        // The same request as native, only written as text: every native guarantee carries over.
        const native = buildChatMessages(input({ history, loopMessages, userMessage, historyLimit }));
        expect(nonSystem(messages), `seed ${seed}`).toEqual(toTextProtocolMessages(nonSystem(native)));
      }
      const beforeLoop = nonSystem(messages).filter(
        (message) =>
          (message.role === 'user' && !message.content.startsWith('<tool_result')) ||
          (message.role === 'assistant' && !message.toolCalls && !message.content.includes('<tool_call>')),
      );
      expect(beforeLoop.at(-1)?.role, `seed ${seed}`).toBe('user');
    }
  });
});

const TOOLS = [
  {
    name: 'save_user_profile',
    description: 'Saves profile fields.',
    parameters: { type: 'object', properties: { habit_domain: { type: 'string' } } },
  },
];

/**
 * Text-protocol shape: no tool-role messages, no structured calls, and every assistant message with `<tool_call>`
 * blocks is followed by one user message answering each call, in order, by id.
 */
function textProtocolViolations(messages: readonly ChatMessage[]): string[] {
  const violations: string[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'tool') violations.push(`message ${index}: tool-role message`);
    if (message.role === 'assistant' && message.toolCalls) violations.push(`message ${index}: structured calls`);
    if (message.role === 'assistant' && message.content.includes('<tool_call>')) {
      const ids = parseTextToolCalls(message.content).toolCalls.map((call) => call.id);
      const next = messages[index + 1];
      const answered = [...(next?.content ?? '').matchAll(/<tool_result name="[^"]*" id="([^"]*)">/g)].map(
        (match) => match[1],
      );
      if (next?.role !== 'user') violations.push(`message ${index}: calls not followed by a user message`);
      if (answered.length !== ids.length)
        violations.push(`message ${index}: ${answered.length} results for ${ids.length} calls`);
    }
  });
  return violations;
}

describe('text protocol (LLM_TOOL_PROTOCOL=text) in the context builder', () => {
  const protocol: ToolProtocol = 'text';

  it('describes the tools and the exact call format in a system block, and sends no tool-role message', () => {
    const messages = buildChatMessages(
      input({
        toolProtocol: protocol,
        tools: TOOLS,
        contextBlocks: ['CONTEXT'],
        toneGuide: 'TONE',
        loopMessages: [
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'c1', name: 'save_user_profile', arguments: '{"habit_domain":"sleep"}' }],
          },
          { role: 'tool', toolCallId: 'c1', content: '{"status":"success"}' },
        ],
      }),
    );
    expect(roles(messages)).toEqual(['system', 'system', 'system', 'system', 'user', 'assistant', 'user']);
    const toolBlock = messages[2]?.content ?? '';
    expect(toolBlock).toContain('<tool_call>{"name": "tool_name", "arguments": {"argument": "value"}}</tool_call>');
    expect(toolBlock).toContain('save_user_profile');
    expect(toolBlock).toContain('Saves profile fields.');
    expect(toolBlock).toContain(JSON.stringify(TOOLS[0]?.parameters));
    expect(messages[5]?.content).toBe(
      '<tool_call>{"name":"save_user_profile","arguments":{"habit_domain":"sleep"}}</tool_call>',
    );
    expect(messages[6]?.content).toBe(
      '<tool_result name="save_user_profile" id="c1">{"status":"success"}</tool_result>',
    );
  });

  it('answers every call of a round in one user message, in call order, with placeholders for missing and empty results', () => {
    const messages = buildChatMessages(
      input({
        toolProtocol: protocol,
        tools: TOOLS,
        loopMessages: [
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              { id: 'a', name: 't', arguments: '{}' },
              { id: 'b', name: 't', arguments: '{}' },
              { id: 'c', name: 't', arguments: '{}' },
            ],
          },
          { role: 'tool', toolCallId: 'b', content: '' },
          { role: 'tool', toolCallId: 'a', content: 'A' },
        ],
      }),
    );
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [
        '<tool_result name="t" id="a">A</tool_result>',
        `<tool_result name="t" id="b">${EMPTY_TOOL_RESULT_PLACEHOLDER}</tool_result>`,
        `<tool_result name="t" id="c">${MISSING_TOOL_RESULT_PLACEHOLDER}</tool_result>`,
      ].join('\n'),
    });
  });

  it('adds no tool block for a module without tools, and none in native mode', () => {
    expect(roles(buildChatMessages(input({ toolProtocol: protocol, tools: [] })))).toEqual(['system', 'user']);
    expect(roles(buildChatMessages(input({ tools: TOOLS })))).toEqual(['system', 'user']);
  });
});
