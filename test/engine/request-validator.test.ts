import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import {
  createRequestGuard,
  MISSING_TOOL_RESULT_PLACEHOLDER,
  repairChatRequest,
  validateChatRequest,
} from '../../src/engine/request-validator.ts';
import type { ChatMessage } from '../../src/llm/llm.ts';

const system = (content: string): ChatMessage => ({ role: 'system', content });
const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string, ...ids: string[]): ChatMessage =>
  ids.length === 0
    ? { role: 'assistant', content }
    : { role: 'assistant', content, toolCalls: ids.map((id) => ({ id, name: 'tool', arguments: `{"id":"${id}"}` })) };
const result = (id: string, content = 'ok'): ChatMessage => ({ role: 'tool', toolCallId: id, content });

describe('validateChatRequest', () => {
  it('accepts a well-formed request', () => {
    expect(validateChatRequest([system('s'), user('u'), assistant('', 'a', 'b'), result('a'), result('b')])).toEqual(
      [],
    );
  });

  it('rule 1: flags a system message after the conversation started', () => {
    expect(validateChatRequest([system('s'), user('u'), system('late')])).toEqual([
      'message 2: system message after the conversation started',
    ]);
  });

  it('rule 2: flags a first non-system message that is not a user message, and a request without one', () => {
    expect(validateChatRequest([system('s'), assistant('hi'), user('u')])).toEqual([
      'message 1: the first non-system message is assistant, not user',
    ]);
    expect(validateChatRequest([system('s')])).toEqual(['no user message']);
  });

  it('rule 3: flags unanswered calls, results out of order, orphans and duplicates', () => {
    expect(validateChatRequest([user('u'), assistant('', 'a'), user('in between'), result('a')])).toEqual([
      'message 1: tool call a (tool) is not answered in order',
      'message 3: tool result for a does not follow its tool call',
    ]);
    expect(validateChatRequest([user('u'), assistant('', 'a', 'b'), result('b'), result('a')])).toEqual([
      'message 1: tool call a (tool) is not answered in order',
      'message 3: tool result for a does not follow its tool call',
    ]);
    expect(validateChatRequest([user('u'), result('x')])).toEqual([
      'message 1: tool result for x does not follow its tool call',
    ]);
    expect(validateChatRequest([user('u'), assistant('', 'a'), result('a'), result('a')])).toEqual([
      'message 3: tool result for a does not follow its tool call',
    ]);
  });

  it('rule 5: flags an assistant message with no content and no tool calls', () => {
    expect(validateChatRequest([user('u'), assistant(' ')])).toEqual([
      'message 1: assistant message with no content and no tool calls',
    ]);
    expect(validateChatRequest([user('u'), { role: 'assistant', content: '', toolCalls: [] }])).toHaveLength(1);
  });
});

describe('repairChatRequest', () => {
  it('fixes every kind of violation at once', () => {
    const repaired = repairChatRequest([
      system('s1'),
      assistant('stray greeting'),
      user('u'),
      system('s2'),
      result('orphan'),
      assistant(''),
      assistant('', 'a', 'b'),
      result('b', 'B'),
      user('interrupting'),
      result('a', 'too late'),
    ]);
    expect(repaired).toEqual([
      system('s1'),
      system('s2'),
      user('u'),
      assistant('', 'a', 'b'),
      result('a', MISSING_TOOL_RESULT_PLACEHOLDER),
      result('b', 'B'),
      user('interrupting'),
    ]);
    expect(validateChatRequest(repaired)).toEqual([]);
  });

  it('pairs results with the nearest call when a provider reuses ids across rounds', () => {
    const messages = [
      user('u'),
      assistant('', 'call_0'),
      result('call_0', 'first'),
      assistant('', 'call_0'),
      result('call_0', 'second'),
    ];
    expect(repairChatRequest(messages)).toEqual(messages);
  });
});

describe('createRequestGuard', () => {
  const broken = [user('u'), assistant('')];

  it('passes a valid request through untouched', () => {
    const log = { warn: () => expect.unreachable('no log for a valid request') };
    const messages = [user('u')];
    expect(createRequestGuard({ mode: 'throw', log })(messages)).toBe(messages);
  });

  it('throws an internal AppError listing the violations in throw mode', () => {
    const guard = createRequestGuard({ mode: 'throw', log: { warn: () => undefined } });
    let caught: unknown;
    try {
      guard(broken, { purpose: 'intake' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect(caught).toMatchObject({
      code: 'internal',
      message: 'Invalid chat request: message 1: assistant message with no content and no tool calls',
      details: { purpose: 'intake' },
    });
  });

  it('repairs and logs in repair mode', () => {
    const logged: Array<{ details: Record<string, unknown>; message: string }> = [];
    const guard = createRequestGuard({
      mode: 'repair',
      log: { warn: (details, message) => logged.push({ details, message }) },
    });
    expect(guard(broken, { purpose: 'feedback' })).toEqual([user('u')]);
    expect(logged).toEqual([
      {
        message: 'chat request repaired',
        details: {
          violations: ['message 1: assistant message with no content and no tool calls'],
          remaining: [],
          purpose: 'feedback',
        },
      },
    ]);
  });

  it('reports what it could not repair', () => {
    const logged: Array<Record<string, unknown>> = [];
    const guard = createRequestGuard({ mode: 'repair', log: { warn: (details) => logged.push(details) } });
    expect(guard([system('s'), assistant('only me')])).toEqual([system('s'), assistant('only me')]);
    expect(logged[0]?.['remaining']).toEqual(['message 1: the first non-system message is assistant, not user']);
  });
});
