import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../../src/domain/data-keys.ts';
import type { ParticipantStatus } from '../../../src/domain/participant.ts';
import { TIMER_ID_DATA_KEY } from '../../../src/scheduling/timers/timer-jobs.ts';
import { createTimerHarness, HOUR, START, type TimerHarness } from './harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

/** A participant with every kind of job pending: daily prompt, reminder, auto-feedback, feedback, transition. */
async function participantWithEveryJob(): Promise<string> {
  const participant = await harness.enrol();
  harness.clock.set(new Date(START.getTime() - HOUR));
  await harness.scheduleDaily(participant.id, '09:10');
  await harness.advance(HOUR);
  await harness.store.transaction(async () => {
    const now = harness.clock.now();
    await harness.timers.turnHooks.onImmediatePrompt({ participantId: participant.id, at: now });
    await harness.timers.delayedTransitions.schedule({
      participantId: participant.id,
      target: 'FEEDBACK',
      delayMinutes: 30,
      now,
    });
  });
  const kinds = (await harness.pendingJobs(participant.id)).map((job) => job.kind).sort();
  expect(kinds).toEqual([
    'auto_feedback',
    'daily_prompt',
    'daily_prompt_reminder',
    'feedback_timeout',
    'state_transition',
  ]);
  return participant.id;
}

function changeStatus(participantId: string, status: ParticipantStatus, cancelJobs: boolean): Promise<void> {
  return harness.store.transaction(async (tx) => {
    const now = harness.clock.now();
    await tx.participants.update(participantId, { status, updatedAt: now });
    if (cancelJobs) await harness.timers.cancelAllParticipantJobs(participantId, now);
  });
}

describe('participant lifecycle', () => {
  for (const status of ['paused', 'completed', 'withdrawn'] as const) {
    it(`${status}: every pending job is cancelled, the timer ids cleared, and nothing is sent afterwards`, async () => {
      harness = await createTimerHarness();
      const participantId = await participantWithEveryJob();
      const sentBefore = harness.sentTexts(participantId).length;
      await changeStatus(participantId, status, true);

      expect(await harness.pendingJobs(participantId)).toEqual([]);
      const data = await harness.data(participantId);
      for (const key of Object.values(TIMER_ID_DATA_KEY)) expect(data[key]).toBeUndefined();
      expect(data[DataKey.dailyPromptPending]).toBeUndefined();
      await harness.advance(3 * 24 * HOUR);
      expect(harness.sentTexts(participantId)).toHaveLength(sentBefore);
    });
  }

  it('deleting a participant leaves no pending job, whether the jobs are cancelled before or after the delete', async () => {
    harness = await createTimerHarness();
    for (const order of ['cancel-then-delete', 'delete-then-cancel'] as const) {
      const participantId = await participantWithEveryJob();
      await harness.store.transaction(async (tx) => {
        const now = harness.clock.now();
        if (order === 'cancel-then-delete') await harness.timers.cancelAllParticipantJobs(participantId, now);
        await tx.participants.delete(participantId);
        if (order === 'delete-then-cancel') await harness.timers.cancelAllParticipantJobs(participantId, now);
      });
      expect(await harness.pendingJobs(participantId)).toEqual([]);
      // Clearing the timer ids must not bring a deleted participant's flow state back.
      expect(await harness.store.flowStates.get(participantId)).toBeUndefined();
      const sentBefore = harness.sentTexts(participantId).length;
      await harness.advance(2 * 24 * HOUR);
      expect(harness.sentTexts(participantId)).toHaveLength(sentBefore);
    }
  });

  it('a timer that fires for a participant who is no longer active sends nothing and records why', async () => {
    harness = await createTimerHarness();
    const participantId = await participantWithEveryJob();
    const sentBefore = harness.sentTexts(participantId).length;
    // The status changed without cancelling (e.g. the jobs were already claimed): the handlers re-check.
    await changeStatus(participantId, 'paused', false);
    await harness.advance(6 * HOUR);

    expect(harness.sentTexts(participantId)).toHaveLength(sentBefore);
    const data = await harness.data(participantId);
    expect(data[DataKey.conversationState]).toBeUndefined();
    const reasons = (await harness.events(participantId, 'timer-skipped')).map((event) => [
      event.data['kind'],
      event.data['reason'],
    ]);
    expect(reasons).toEqual(
      expect.arrayContaining([
        ['auto_feedback', 'participant-paused'],
        ['feedback_timeout', 'participant-paused'],
        ['state_transition', 'participant-paused'],
        ['daily_prompt_reminder', 'participant-paused'],
      ]),
    );
    for (const key of Object.values(TIMER_ID_DATA_KEY)) expect(data[key]).toBeUndefined();
  });
});
