import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../../src/domain/data-keys.ts';
import { INTENSITY_POLL_QUESTION } from '../../../src/domain/polls.ts';
import { createProfile, type Intensity, serializeProfile } from '../../../src/domain/profile.ts';
import { participantTimeZone } from '../../../src/scheduling/timers/intensity-poll.ts';
import { createTimerHarness, HABIT_PROMPT, HOUR, MINUTE, START, type TimerHarness } from './harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

function intensityPolls(participantId: string) {
  return harness.messenger.sent.filter(
    (record) =>
      record.participantId === participantId &&
      record.message.type === 'poll' &&
      record.message.question === INTENSITY_POLL_QUESTION,
  );
}

describe('intensity poll (specification, scenario 8)', () => {
  it('is sent after the first prompt of the day as its own poll message, after the Done poll', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);

    expect(harness.sentTexts(participant.id)).toEqual([HABIT_PROMPT, 'Did you do it?', INTENSITY_POLL_QUESTION]);
    const [poll] = intensityPolls(participant.id);
    expect(poll?.message).toEqual({
      type: 'poll',
      question: "How's the intensity?",
      options: ['Decrease', 'Keep current', 'Increase'],
    });
    expect(poll?.options).toEqual({ kind: 'poll', module: 'scheduler' });
    // 09:00 in Toronto on Monday 2 March.
    expect((await harness.data(participant.id))[DataKey.lastIntensityPromptDate]).toBe('2026-03-02');
  });

  it('is sent at most once per participant-local calendar day, not per UTC day', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    // 23:30 in Toronto, already 04:30 on 3 March in UTC: still the same local day.
    harness.clock.set(new Date('2026-03-03T04:30:00Z'));
    await harness.sendScheduledPrompt(participant.id);
    expect(intensityPolls(participant.id)).toHaveLength(1);
    // 00:30 in Toronto on 3 March: a new local day.
    harness.clock.set(new Date('2026-03-03T05:30:00Z'));
    await harness.sendScheduledPrompt(participant.id);
    expect(intensityPolls(participant.id)).toHaveLength(2);
    expect((await harness.data(participant.id))[DataKey.lastIntensityPromptDate]).toBe('2026-03-03');
  });

  it('offers options by the current intensity', async () => {
    harness = await createTimerHarness();
    const expected: Record<Intensity, string[]> = {
      low: ['Keep current', 'Increase'],
      normal: ['Decrease', 'Keep current', 'Increase'],
      high: ['Decrease', 'Keep current'],
    };
    for (const intensity of ['low', 'normal', 'high'] as const) {
      const participant = await harness.enrol();
      const profile = { ...createProfile(START), intensity };
      await harness.setData(participant.id, { [DataKey.userProfile]: serializeProfile(profile) });
      await harness.sendScheduledPrompt(participant.id);
      const [poll] = intensityPolls(participant.id);
      expect(poll?.message.type === 'poll' && poll.message.options).toEqual(expected[intensity]);
    }
  });

  it('uses the schedule time zone when the participant has none, else UTC', async () => {
    expect(participantTimeZone({ timezone: 'america/toronto' }, undefined)).toBe('America/Toronto');
    const registry = JSON.stringify([
      { id: 's1', type: 'fixed', fixed_time: '09:00', timezone: 'Asia/Tokyo', created_at: '', timer_id: '' },
    ]);
    expect(participantTimeZone({ timezone: '' }, registry)).toBe('Asia/Tokyo');
    expect(participantTimeZone({ timezone: 'Not/AZone' }, undefined)).toBe('UTC');
    expect(participantTimeZone({ timezone: '' }, '[]')).toBe('UTC');

    harness = await createTimerHarness();
    const participant = await harness.enrol({ timezone: '' });
    await harness.setData(participant.id, { [DataKey.scheduleRegistry]: registry });
    // 20:00 UTC on 2 March is 05:00 on 3 March in Tokyo.
    harness.clock.set(new Date('2026-03-02T20:00:00Z'));
    await harness.sendScheduledPrompt(participant.id);
    expect((await harness.data(participant.id))[DataKey.lastIntensityPromptDate]).toBe('2026-03-03');
  });

  it('a second prompt a few minutes later the same day sends no second poll', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(10 * MINUTE);
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(HOUR);
    expect(intensityPolls(participant.id)).toHaveLength(1);
  });
});
