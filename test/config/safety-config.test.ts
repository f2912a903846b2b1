import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('SAFETY_COACH_TURN', () => {
  it('is skip by default, and reads reply and hold', () => {
    expect(loadConfig({}).safety.coachTurn).toBe('skip');
    expect(loadConfig({ SAFETY_COACH_TURN: 'reply' }).safety.coachTurn).toBe('reply');
    expect(loadConfig({ SAFETY_COACH_TURN: 'hold' }).safety.coachTurn).toBe('hold');
  });

  it('refuses anything else, and hold without the staff review it waits for', () => {
    expect(() => loadConfig({ SAFETY_COACH_TURN: 'later' })).toThrow(
      /SAFETY_COACH_TURN must be one of skip, reply, hold/,
    );
    expect(() => loadConfig({ SAFETY_COACH_TURN: 'hold', SAFETY_REVIEW: 'false' })).toThrow(
      /SAFETY_COACH_TURN=hold .* needs SAFETY_REVIEW=true/,
    );
  });
});
