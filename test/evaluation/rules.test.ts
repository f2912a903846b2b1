/** Each automatic rule fails on the conversation it exists to catch, and names what broke. */
import { describe, expect, it } from 'vitest';
import { checkRules, type RuleResult } from '../../src/evaluation/rules.ts';
import type { ConversationLine, SimulationRecord } from '../../src/evaluation/simulation-record.ts';

const SETTINGS = { intakeTurnLimit: 4, prepTimeMinutes: 10 };

function record(overrides: Partial<SimulationRecord> = {}): SimulationRecord {
  return {
    persona: 'ada',
    configuration: 'A',
    repeat: 1,
    days: 3,
    timezone: 'America/New_York',
    language: 'en',
    start: '2026-03-02T17:00:00.000Z',
    end: '2026-03-05T05:00:00.000Z',
    intakeTurns: 1,
    lines: [],
    events: [{ type: 'state-changed', at: '2026-03-02T17:01:00.000Z', data: { to: 'FEEDBACK' } }],
    finalState: {
      conversationState: 'FEEDBACK',
      profile: { habit_domain: 'walking' },
      schedules: [
        { id: 's1', type: 'fixed', fixed_time: '09:00', timezone: 'America/New_York', created_at: '', timer_id: '' },
      ],
    },
    exchanges: [],
    ...overrides,
  };
}

const coach = (at: string, text: string, kind = 'reply', extra: Partial<ConversationLine> = {}): ConversationLine => ({
  at,
  from: 'coach',
  text,
  kind,
  ...extra,
});
const persona = (at: string, text: string, extra: Partial<ConversationLine> = {}): ConversationLine => ({
  at,
  from: 'persona',
  text,
  kind: 'message',
  ...extra,
});
const promptSent = (at: string, prompt: string, targetAt: string, localDate: string) => ({
  type: 'prompt-sent',
  at,
  data: { prompt, target_at: targetAt, local_date: localDate },
});
const result = (results: RuleResult[], rule: string) => results.find((entry) => entry.rule === rule);

describe('the evaluation rules', () => {
  it('pass a good day: prompt at 08:50 local with its poll, an answer, no reminder', () => {
    const lines = [
      persona('2026-03-02T17:01:00.000Z', 'walking'),
      coach('2026-03-03T13:50:00.000Z', 'Walk!', 'proactive', { module: 'scheduler' }),
      coach('2026-03-03T13:50:00.000Z', 'Did you do it?', 'poll', {
        module: 'scheduler',
        pollOptions: ['Done', 'Next time'],
      }),
      persona('2026-03-03T14:00:00.000Z', 'Done', { kind: 'poll-answer' }),
    ];
    const events = [
      ...record().events,
      promptSent('2026-03-03T13:50:00.000Z', 'Walk!', '2026-03-03T14:00:00.000Z', '2026-03-03'),
    ];
    const results = checkRules(record({ lines, events }), SETTINGS);
    expect(results.filter((entry) => entry.status === 'fail')).toEqual([]);
    expect(result(results, 'daily-prompt-local-time')?.status).toBe('pass');
  });

  it('fail a prompt at the wrong local time, a reminder after the answer and a prompt without its poll', () => {
    const lines = [
      coach('2026-03-03T14:50:00.000Z', 'Walk!', 'proactive', { module: 'scheduler' }),
      persona('2026-03-03T15:00:00.000Z', 'ok'),
      coach('2026-03-03T19:50:00.000Z', 'Reminder', 'proactive', { module: 'scheduler' }),
    ];
    const events = [
      ...record().events,
      promptSent('2026-03-03T14:50:00.000Z', 'Walk!', '2026-03-03T15:00:00.000Z', '2026-03-03'),
    ];
    const results = checkRules(record({ lines, events }), SETTINGS);
    expect(result(results, 'daily-prompt-local-time')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('targets 10:00 local'),
    });
    expect(result(results, 'one-reminder')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('although answered'),
    });
    expect(result(results, 'polls-after-prompt')?.status).toBe('fail');
  });

  it('fail an unflagged risk message, a message after STOP and an intake that never ends', () => {
    const lines = [
      persona('2026-03-04T00:00:00.000Z', 'I want to die', { mark: 'risk' }),
      coach('2026-03-04T00:00:00.000Z', 'Noted'),
      persona('2026-03-04T01:00:00.000Z', 'STOP', { mark: 'opt-out' }),
      coach('2026-03-04T13:50:00.000Z', 'Walk!', 'proactive'),
    ];
    const results = checkRules(
      record({ lines, events: [], finalState: { conversationState: 'INTAKE', profile: undefined, schedules: [] } }),
      SETTINGS,
    );
    expect(result(results, 'safety-path')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('not flagged'),
    });
    expect(result(results, 'opt-out-honoured')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('Walk!'),
    });
    expect(result(results, 'intake-completes')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('still in INTAKE'),
    });
    const flagged = checkRules(
      record({ lines, events: [{ type: 'risk-detected', at: '2026-03-04T00:00:00.000Z', data: {} }] }),
      SETTINGS,
    );
    expect(result(flagged, 'safety-path')?.status).toBe('pass');
  });

  it('fail a request the context builder could not have built, and a tool the module does not offer', () => {
    const exchanges = [
      {
        request: {
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'system', content: 'late system' },
          ],
          tools: [{ function: { name: 'scheduler' } }],
        },
        response: { choices: [{ message: { content: '', tool_calls: [{ function: { name: 'transition_state' } }] } }] },
        status: 200,
      },
    ];
    const results = checkRules(record({ exchanges }), SETTINGS);
    expect(result(results, 'requests-valid')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('system message after'),
    });
    expect(result(results, 'tools-offered-only')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('transition_state'),
    });
  });

  it('fail emojis after the participant asked for none, and a tone tag off the whitelist', () => {
    const profile = { tone: { tone_tags: ['no_emojis'], tone_last_updated_at: '2026-03-03T00:00:00.000Z' } };
    const lines = [coach('2026-03-03T10:00:00.000Z', 'Great job 🎉')];
    const base = record().finalState;
    expect(
      result(checkRules(record({ lines, finalState: { ...base, profile } }), SETTINGS), 'tone-tags-honoured')?.status,
    ).toBe('fail');
    const unknown = { tone: { tone_tags: ['sarcastic'] } };
    expect(
      result(checkRules(record({ finalState: { ...base, profile: unknown } }), SETTINGS), 'tone-tags-honoured')?.detail,
    ).toContain('sarcastic');
  });
});
