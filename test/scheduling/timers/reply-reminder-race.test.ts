/**
 * A reply and its reminder due at the same instant: whatever the interleaving, exactly one of them wins. Either
 * the reply cancels the reminder (a `reminder-cancelled` event, `dailyPromptRespondedAt`) and no reminder is sent,
 * or the reminder is sent and the reply finds nothing pending. Never both, never neither.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../../src/domain/data-keys.ts';
import { DAILY_PROMPT_REMINDER_MESSAGE } from '../../../src/scheduling/timers/daily-prompt-reminder.ts';
import { createTimerHarness, HOUR, type TimerHarness } from './harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

interface Outcome {
  replyCancelled: boolean;
  reminderSent: boolean;
}

async function outcome(participantId: string): Promise<Outcome> {
  const cancellations = await harness.events(participantId, 'reminder-cancelled');
  const reminders = harness.sentTexts(participantId).filter((text) => text === DAILY_PROMPT_REMINDER_MESSAGE);
  expect(reminders.length).toBeLessThanOrEqual(1);
  const data = await harness.data(participantId);
  // The data keys agree with what happened.
  expect(data[DataKey.dailyPromptRespondedAt] !== undefined).toBe(cancellations.length > 0);
  expect(data[DataKey.dailyPromptReminderSentAt] !== undefined).toBe(reminders.length > 0);
  return { replyCancelled: cancellations.length > 0, reminderSent: reminders.length > 0 };
}

/** Sends a prompt and moves the clock to the instant its reminder is due, without running it. */
async function promptWithReminderDueNow(): Promise<{ participantId: string; reminderId: string; dueAt: Date }> {
  const participant = await harness.enrol();
  await harness.sendScheduledPrompt(participant.id);
  const reminderId = (await harness.data(participant.id))[DataKey.dailyPromptReminderTimerID] ?? '';
  const reminder = await harness.store.jobs.get(reminderId);
  if (!reminder) throw new Error('no reminder scheduled');
  // Auto-feedback (5 minutes) is not part of this race: let it run first.
  await harness.advance(HOUR);
  harness.clock.set(reminder.runAt);
  return { participantId: participant.id, reminderId, dueAt: reminder.runAt };
}

describe('reply racing its reminder', () => {
  it('the runner claimed the reminder but the reply commits first: the reply wins, no reminder', async () => {
    harness = await createTimerHarness();
    const { participantId, reminderId, dueAt } = await promptWithReminderDueNow();
    // The job is claimed (running) and its handler is queued behind the lock the reply holds.
    await harness.whileClaimed(participantId, reminderId, () =>
      harness.store.transaction(async (tx) => {
        await tx.transcript.append([
          { participantId, role: 'user', kind: 'message', content: 'did it!', createdAt: dueAt },
        ]);
        await harness.timers.turnHooks.onParticipantMessage({
          participantId,
          at: dueAt,
          sourceMessageId: undefined,
        });
      }),
    );
    expect(await outcome(participantId)).toEqual({ replyCancelled: true, reminderSent: false });
    expect((await harness.store.jobs.get(reminderId))?.status).toBe('completed');
  });

  it('the reminder handler holds the lock first: the reminder wins, the reply finds nothing pending', async () => {
    harness = await createTimerHarness();
    const { participantId, reminderId, dueAt } = await promptWithReminderDueNow();
    let reply: Promise<void> | undefined;
    await harness.whileClaimed(participantId, reminderId, async () => {
      // The lock is FIFO: the reply queues behind the reminder handler.
      reply = harness.reply(participantId, 'did it!', dueAt);
    });
    await reply;
    expect(await outcome(participantId)).toEqual({ replyCancelled: false, reminderSent: true });
  });

  it('the reply commits before the runner looks: the reminder job is cancelled and never runs', async () => {
    harness = await createTimerHarness();
    const { participantId, reminderId, dueAt } = await promptWithReminderDueNow();
    await harness.reply(participantId, 'did it!', dueAt);
    await harness.runner.runDue();
    expect(await outcome(participantId)).toEqual({ replyCancelled: true, reminderSent: false });
    expect((await harness.store.jobs.get(reminderId))?.status).toBe('cancelled');
  });

  it('in many concurrent runs, with the reply arriving at varying moments and even without the lock, exactly one side wins', async () => {
    harness = await createTimerHarness();
    const results: Outcome[] = [];
    for (let round = 0; round < 40; round += 1) {
      const { participantId, dueAt } = await promptWithReminderDueNow();
      const run = harness.runner.runDue();
      // Let the runner get 0–9 event-loop turns ahead, so the reply lands before, during or after the claim.
      for (let turn = 0; turn < round % 10; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      const reply =
        round % 4 === 3
          ? // Without the lock the decision is still atomic: each side clears the pending state in its own transaction.
            harness.store.transaction(() =>
              harness.timers.turnHooks.onParticipantMessage({
                participantId,
                at: dueAt,
                sourceMessageId: undefined,
              }),
            )
          : harness.reply(participantId, 'did it!', dueAt);
      await Promise.all([run, reply]);
      const result = await outcome(participantId);
      expect(result.replyCancelled).not.toBe(result.reminderSent);
      results.push(result);
    }
    // Both interleavings really happened.
    expect(results.some((result) => result.reminderSent)).toBe(true);
    expect(results.some((result) => result.replyCancelled)).toBe(true);
  });
});
