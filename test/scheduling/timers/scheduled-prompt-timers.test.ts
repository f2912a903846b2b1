/**
 * The timers behind the real `daily_prompt` handler, driven by a real daily schedule on the manual clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../../src/domain/data-keys.ts';
import { conversationStateOf } from '../../../src/domain/participant-data.ts';
import { INTENSITY_POLL_QUESTION } from '../../../src/domain/polls.ts';
import { localDateOf } from '../../../src/scheduling/schedule-time.ts';
import { DAILY_PROMPT_REMINDER_MESSAGE } from '../../../src/scheduling/timers/daily-prompt-reminder.ts';
import { createTimerHarness, HABIT_PROMPT, HOUR, MINUTE, START, type TimerHarness } from './harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

/** Advances to the participant's next daily prompt and lets it (and its hook's follow-ups) run. */
async function untilNextPrompt(participantId: string): Promise<Date> {
  const next = (await harness.pendingJobs(participantId)).find((job) => job.kind === 'daily_prompt');
  if (!next) throw new Error('no daily prompt armed');
  await harness.runner.advanceTo(next.runAt);
  return next.runAt;
}

function count(texts: string[], text: string): number {
  return texts.filter((sent) => sent === text).length;
}

describe('timers after a scheduled prompt (specification §Timers)', () => {
  it('scenarios 6, 8, 11: prompt, Done poll, intensity poll, FEEDBACK after 5 minutes; a reply cancels the reminder', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    harness.clock.set(new Date(START.getTime() - HOUR));
    await harness.scheduleDaily(participant.id, '09:10');

    const promptAt = await untilNextPrompt(participant.id);
    expect(promptAt).toEqual(START);
    expect(harness.sentTexts(participant.id)).toEqual([HABIT_PROMPT, 'Did you do it?', INTENSITY_POLL_QUESTION]);
    let data = await harness.data(participant.id);
    expect(JSON.parse(data[DataKey.dailyPromptPending] ?? '')).toMatchObject({
      sent_at: START.toISOString(),
      reminder_due_at: new Date(START.getTime() + 5 * HOUR).toISOString(),
    });
    expect(data[DataKey.lastIntensityPromptDate]).toBe('2026-03-02');
    expect(data[DataKey.unansweredProactiveCount]).toBe('1');

    await harness.advance(5 * MINUTE);
    expect(conversationStateOf(await harness.data(participant.id))).toBe('FEEDBACK');

    await harness.advance(2 * HOUR);
    await harness.reply(participant.id, 'Walked 10 minutes!');
    data = await harness.data(participant.id);
    expect(data[DataKey.dailyPromptRespondedAt]).toBe(harness.clock.now().toISOString());
    expect(data[DataKey.dailyPromptPending]).toBeUndefined();

    await harness.advance(6 * HOUR);
    expect(count(harness.sentTexts(participant.id), DAILY_PROMPT_REMINDER_MESSAGE)).toBe(0);
  });

  it('specification, scenario 7: without a reply the reminder goes out at 14:00 local, and a later reply cancels nothing', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    harness.clock.set(new Date(START.getTime() - HOUR));
    await harness.scheduleDaily(participant.id, '09:10');
    await untilNextPrompt(participant.id);

    await harness.advance(5 * HOUR);
    expect(harness.sentTexts(participant.id).at(-1)).toBe(DAILY_PROMPT_REMINDER_MESSAGE);
    const data = await harness.data(participant.id);
    expect(data[DataKey.dailyPromptReminderSentAt]).toBe(new Date(START.getTime() + 5 * HOUR).toISOString());
    expect(data[DataKey.dailyPromptPending]).toBeUndefined();

    await harness.advance(HOUR);
    await harness.reply(participant.id, 'sorry, just saw this');
    expect((await harness.data(participant.id))[DataKey.dailyPromptRespondedAt]).toBeUndefined();
  });

  it('a week across the spring-forward change: one prompt and one intensity poll per local day, reminders only on unanswered days', async () => {
    // Runs in milliseconds on the manual clock; speed is measured by `npm run bench`, never asserted here.
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    harness.clock.set(new Date(START.getTime() - HOUR));
    await harness.scheduleDaily(participant.id, '09:10');

    const unansweredDays = new Set([2, 4]);
    const promptTimes: Date[] = [];
    const pollDates: string[] = [];
    for (let day = 0; day < 7; day += 1) {
      const promptAt = await untilNextPrompt(participant.id);
      promptTimes.push(promptAt);
      pollDates.push((await harness.data(participant.id))[DataKey.lastIntensityPromptDate] ?? '');
      await harness.advance(HOUR);
      if (!unansweredDays.has(day)) await harness.reply(participant.id, `day ${day}: done`);
    }
    await harness.advance(6 * HOUR);

    // 09:00 local every day: 14:00 UTC in EST, 13:00 UTC from Sunday 8 March (EDT).
    expect(promptTimes.map((time) => time.toISOString().slice(11, 16))).toEqual([
      '14:00',
      '14:00',
      '14:00',
      '14:00',
      '14:00',
      '14:00',
      '13:00',
    ]);
    expect(pollDates).toEqual(promptTimes.map((time) => localDateOf(time, 'America/Toronto')));
    expect(new Set(pollDates).size).toBe(7);
    const texts = harness.sentTexts(participant.id);
    expect(count(texts, HABIT_PROMPT)).toBe(7);
    expect(count(texts, INTENSITY_POLL_QUESTION)).toBe(7);
    expect(count(texts, DAILY_PROMPT_REMINDER_MESSAGE)).toBe(2);
    expect((await harness.data(participant.id))[DataKey.engagementState]).toBe('active');
  });
});
