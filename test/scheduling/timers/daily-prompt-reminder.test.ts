import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../../src/domain/data-keys.ts';
import { DAILY_PROMPT_REMINDER_MESSAGE } from '../../../src/scheduling/timers/daily-prompt-reminder.ts';
import { createTimerHarness, HABIT_PROMPT, HOUR, MINUTE, type TimerHarness } from './harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

describe('daily prompt reminder (specification §Timers)', () => {
  it('specification, scenario 6: a prompt stores the pending state and a 5-hour reminder; a reply cancels it', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    const sentAt = await harness.sendScheduledPrompt(participant.id);

    const data = await harness.data(participant.id);
    expect(JSON.parse(data[DataKey.dailyPromptPending] ?? '')).toEqual({
      sent_at: sentAt.toISOString(),
      to: participant.phoneNumber,
      reminder_due_at: new Date(sentAt.getTime() + 5 * HOUR).toISOString(),
    });
    const reminder = (await harness.pendingJobs(participant.id)).find((job) => job.kind === 'daily_prompt_reminder');
    expect(reminder?.dedupKey).toBe(`daily_prompt_reminder:${participant.id}`);
    expect(reminder?.runAt).toEqual(new Date(sentAt.getTime() + 5 * HOUR));
    expect(data[DataKey.dailyPromptReminderTimerID]).toBe(reminder?.id);

    await harness.advance(2 * HOUR);
    await harness.reply(participant.id, 'Done, walked twice around the block');
    const afterReply = await harness.data(participant.id);
    expect(afterReply[DataKey.dailyPromptPending]).toBeUndefined();
    expect(afterReply[DataKey.dailyPromptReminderTimerID]).toBeUndefined();
    expect(afterReply[DataKey.dailyPromptRespondedAt]).toBe(harness.clock.now().toISOString());
    expect((await harness.store.jobs.get(reminder?.id ?? ''))?.status).toBe('cancelled');
    expect(await harness.events(participant.id, 'reminder-cancelled')).toHaveLength(1);

    await harness.advance(10 * HOUR);
    expect(harness.sentTexts(participant.id)).not.toContain(DAILY_PROMPT_REMINDER_MESSAGE);
  });

  it('specification, scenario 7: the reminder fires after 5 hours, records its time and clears the pending state; a late reply finds nothing to cancel', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    const sentAt = await harness.sendScheduledPrompt(participant.id);

    await harness.advance(5 * HOUR - 1);
    expect(harness.sentTexts(participant.id)).not.toContain(DAILY_PROMPT_REMINDER_MESSAGE);
    await harness.advance(1);
    const reminders = harness.messenger.sent.filter(
      (record) => record.message.type === 'text' && record.message.text === DAILY_PROMPT_REMINDER_MESSAGE,
    );
    expect(reminders).toHaveLength(1);
    expect(reminders[0]?.options).toEqual({ kind: 'proactive', module: 'scheduler' });

    const data = await harness.data(participant.id);
    expect(data[DataKey.dailyPromptReminderSentAt]).toBe(new Date(sentAt.getTime() + 5 * HOUR).toISOString());
    expect(data[DataKey.dailyPromptPending]).toBeUndefined();
    expect(data[DataKey.dailyPromptReminderTimerID]).toBeUndefined();
    // The model sees the reminder in the working history, after the prompt-time messages.
    expect(data[DataKey.conversationHistory]).toContain(DAILY_PROMPT_REMINDER_MESSAGE);

    await harness.advance(HOUR);
    await harness.reply(participant.id, 'sorry, busy day');
    const afterReply = await harness.data(participant.id);
    expect(afterReply[DataKey.dailyPromptRespondedAt]).toBeUndefined();
    expect(await harness.events(participant.id, 'reminder-cancelled')).toHaveLength(0);
  });

  it('a reply older than the prompt (a delayed delivery) does not cancel the reminder', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    const sentAt = await harness.sendScheduledPrompt(participant.id);
    await harness.reply(participant.id, 'an earlier message', new Date(sentAt.getTime() - MINUTE));
    await harness.reply(participant.id, 'same instant', sentAt);

    expect((await harness.data(participant.id))[DataKey.dailyPromptPending]).toBeDefined();
    await harness.advance(5 * HOUR);
    expect(harness.sentTexts(participant.id)).toContain(DAILY_PROMPT_REMINDER_MESSAGE);
  });

  it('a newer prompt replaces the reminder: only the newest one fires, 5 hours after its own prompt', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(HOUR);
    const secondSentAt = await harness.sendScheduledPrompt(participant.id, 'A second prompt');

    const reminders = (await harness.pendingJobs(participant.id)).filter((job) => job.kind === 'daily_prompt_reminder');
    expect(reminders).toHaveLength(1);
    expect(reminders[0]?.payload).toEqual({ expected_sent_at: secondSentAt.toISOString() });

    await harness.advance(4 * HOUR);
    expect(harness.sentTexts(participant.id)).not.toContain(DAILY_PROMPT_REMINDER_MESSAGE);
    await harness.advance(HOUR);
    expect(harness.sentTexts(participant.id).filter((text) => text === DAILY_PROMPT_REMINDER_MESSAGE)).toHaveLength(1);
  });

  it('a stale reminder (its prompt no longer pending) never fires', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    // The pending state names another prompt, as if it had been rewritten after this reminder was claimed.
    const pending = JSON.parse((await harness.data(participant.id))[DataKey.dailyPromptPending] ?? '{}');
    await harness.setData(participant.id, {
      [DataKey.dailyPromptPending]: JSON.stringify({ ...pending, sent_at: '2026-03-01T14:00:00.000Z' }),
    });

    await harness.advance(6 * HOUR);
    expect(harness.sentTexts(participant.id)).not.toContain(DAILY_PROMPT_REMINDER_MESSAGE);
    expect((await harness.data(participant.id))[DataKey.dailyPromptReminderSentAt]).toBeUndefined();
  });

  it('a zero or negative DAILY_PROMPT_REMINDER_DELAY disables the reminder', async () => {
    for (const delay of [0, -HOUR]) {
      harness = await createTimerHarness({ dailyPromptReminderDelayMs: delay });
      const participant = await harness.enrol();
      await harness.sendScheduledPrompt(participant.id);

      const data = await harness.data(participant.id);
      expect(data[DataKey.dailyPromptPending]).toBeUndefined();
      expect(data[DataKey.dailyPromptReminderTimerID]).toBeUndefined();
      expect((await harness.pendingJobs(participant.id)).map((job) => job.kind)).not.toContain('daily_prompt_reminder');
      await harness.advance(24 * HOUR);
      expect(harness.sentTexts(participant.id)).toEqual([HABIT_PROMPT, 'Did you do it?', "How's the intensity?"]);
      await harness.close();
    }
    harness = await createTimerHarness();
  });

  it('a custom delay is honoured', async () => {
    harness = await createTimerHarness({ dailyPromptReminderDelayMs: 90 * MINUTE });
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(89 * MINUTE);
    expect(harness.sentTexts(participant.id)).not.toContain(DAILY_PROMPT_REMINDER_MESSAGE);
    await harness.advance(MINUTE);
    expect(harness.sentTexts(participant.id)).toContain(DAILY_PROMPT_REMINDER_MESSAGE);
  });
});
