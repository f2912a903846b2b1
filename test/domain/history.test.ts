import { describe, expect, it } from 'vitest';
import { parseHistory, trimHistory } from '../../src/domain/history.ts';

const message = (index: number) => ({
  role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
  content: `message ${index}`,
  timestamp: `2026-03-02T14:${String(index).padStart(2, '0')}:00.000Z`,
});

describe('working history parsing', () => {
  it('reads back what was written', () => {
    const raw = JSON.stringify({ messages: [message(0), message(1)] });
    expect(parseHistory(raw).messages).toEqual([message(0), message(1)]);
  });

  it('drops what is not a message and reads nonsense as an empty history', () => {
    const raw = JSON.stringify({ messages: [message(0), { role: 'system', content: 'x' }, { role: 'user' }, 7] });
    expect(parseHistory(raw).messages).toEqual([message(0)]);
    expect(parseHistory('not json').messages).toEqual([]);
    expect(parseHistory('{"messages": 3}').messages).toEqual([]);
    expect(parseHistory(undefined).messages).toEqual([]);
  });

  it('keeps the most recent messages when trimmed', () => {
    const history = { messages: Array.from({ length: 60 }, (_, index) => message(index)) };
    const trimmed = trimHistory(history, 50);
    expect(trimmed.messages).toHaveLength(50);
    expect(trimmed.messages[0]).toEqual(message(10));
    expect(parseHistory(JSON.stringify(trimmed)).messages.at(-1)).toEqual(message(59));
  });
});
