import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../../src/domain/data-keys.ts';
import { DAILY_PROMPT_REMINDER_MESSAGE } from '../../../src/scheduling/timers/daily-prompt-reminder.ts';
import { shouldSendDailyPrompt } from '../../../src/scheduling/timers/engagement-guard.ts';
import { FEEDBACK_INITIAL_NUDGE } from '../../../src/scheduling/timers/feedback-timers.ts';
import { createTimerHarness, HABIT_PROMPT, HOUR, START, type TimerHarness } from './harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

const DAY = 24 * HOUR;

function count(texts: string[], text: string): number {
  return texts.filter((sent) => sent === text).length;
}

/** Prompt at START (1), its reminder 5 h later (2), the next day's prompt (3): idle. */
async function threeUnanswered(participantId: string): Promise<void> {
  await harness.sendScheduledPrompt(participantId);
  await harness.advance(5 * HOUR);
  harness.clock.set(new Date(START.getTime() + DAY));
  await harness.sendScheduledPrompt(participantId);
}

describe('engagement guard', () => {
  it('counts unanswered proactive messages and makes the participant idle at 3, recording the change', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    expect((await harness.data(participant.id))[DataKey.unansweredProactiveCount]).toBe('1');
    await harness.advance(5 * HOUR);
    let data = await harness.data(participant.id);
    expect(data[DataKey.unansweredProactiveCount]).toBe('2');
    expect(data[DataKey.engagementState]).toBe('active');

    harness.clock.set(new Date(START.getTime() + DAY));
    await harness.sendScheduledPrompt(participant.id);
    data = await harness.data(participant.id);
    expect(data[DataKey.unansweredProactiveCount]).toBe('3');
    expect(data[DataKey.engagementState]).toBe('idle');
    const events = await harness.events(participant.id, 'engagement-changed');
    expect(events.map((event) => event.data)).toEqual([{ from: 'active', to: 'idle', unanswered_proactive_count: 3 }]);
  });

  it('an idle participant gets no reminder, but daily prompts go on', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await threeUnanswered(participant.id);
    await harness.advance(5 * HOUR);

    const texts = harness.sentTexts(participant.id);
    expect(count(texts, DAILY_PROMPT_REMINDER_MESSAGE)).toBe(1);
    const [skipped] = await harness.events(participant.id, 'timer-skipped');
    expect(skipped?.data).toMatchObject({ kind: 'daily_prompt_reminder', reason: 'participant-idle' });
    expect((await harness.data(participant.id))[DataKey.dailyPromptPending]).toBeUndefined();

    harness.clock.set(new Date(START.getTime() + 2 * DAY));
    await harness.sendScheduledPrompt(participant.id);
    expect(count(harness.sentTexts(participant.id), HABIT_PROMPT)).toBe(3);
  });

  it('an idle participant gets no feedback nudge', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await threeUnanswered(participant.id);
    await harness.store.transaction(() =>
      harness.timers.turnHooks.onImmediatePrompt({ participantId: participant.id, at: harness.clock.now() }),
    );
    await harness.advance(4 * HOUR);
    expect(count(harness.sentTexts(participant.id), FEEDBACK_INITIAL_NUDGE)).toBe(0);
    expect((await harness.pendingJobs(participant.id)).map((job) => job.kind)).not.toContain('feedback_followup');
  });

  it('any real message resets the count and makes an idle participant active again; reminders resume', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await threeUnanswered(participant.id);
    await harness.advance(HOUR);
    await harness.reply(participant.id, "I'm back");

    const data = await harness.data(participant.id);
    expect(data[DataKey.unansweredProactiveCount]).toBe('0');
    expect(data[DataKey.engagementState]).toBe('active');
    const events = await harness.events(participant.id, 'engagement-changed');
    expect(events.at(-1)?.data).toEqual({ from: 'idle', to: 'active', unanswered_proactive_count_before: 3 });

    harness.clock.set(new Date(START.getTime() + 2 * DAY));
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(5 * HOUR);
    expect(count(harness.sentTexts(participant.id), DAILY_PROMPT_REMINDER_MESSAGE)).toBe(2);
  });

  it('a reply before the threshold resets the count', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(HOUR);
    await harness.reply(participant.id, 'done');
    harness.clock.set(new Date(START.getTime() + DAY));
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(5 * HOUR);
    const data = await harness.data(participant.id);
    expect(data[DataKey.unansweredProactiveCount]).toBe('2');
    expect(data[DataKey.engagementState]).toBe('active');
  });

  it('IDLE_PAUSES_PROMPTS=true: the daily-prompt handler skips the prompt of an idle participant (recorded)', async () => {
    harness = await createTimerHarness({ idlePausesPrompts: true });
    const participant = await harness.enrol();
    await harness.setData(participant.id, {
      [DataKey.engagementState]: 'idle',
      [DataKey.unansweredProactiveCount]: '3',
    });
    // 09:10 target, 10 minutes prep: the real handler fires at 09:00 Toronto, an hour from now.
    harness.clock.set(new Date(START.getTime() - HOUR));
    await harness.scheduleDaily(participant.id, '09:10');
    await harness.advance(2 * HOUR);

    expect(harness.sentTexts(participant.id)).toEqual([]);
    const [skipped] = await harness.events(participant.id, 'prompt-skipped');
    expect(skipped?.data).toMatchObject({ reason: 'participant-idle' });
    // The schedule goes on: the next day's prompt is armed, and is sent once the participant is active again.
    await harness.reply(participant.id, 'hello again');
    await harness.advance(DAY);
    expect(harness.sentTexts(participant.id)).toContain(HABIT_PROMPT);
  });

  it('shouldSendDailyPrompt and a threshold of 0 (guard disabled)', async () => {
    expect(shouldSendDailyPrompt({ [DataKey.engagementState]: 'idle' }, { idlePausesPrompts: false })).toBe(true);
    expect(shouldSendDailyPrompt({ [DataKey.engagementState]: 'idle' }, { idlePausesPrompts: true })).toBe(false);
    expect(shouldSendDailyPrompt({}, { idlePausesPrompts: true })).toBe(true);

    harness = await createTimerHarness({ idleAfterUnanswered: 0 });
    const participant = await harness.enrol();
    await threeUnanswered(participant.id);
    await harness.advance(5 * HOUR);
    expect((await harness.data(participant.id))[DataKey.engagementState]).toBe('active');
    expect(count(harness.sentTexts(participant.id), DAILY_PROMPT_REMINDER_MESSAGE)).toBe(2);
  });
});
