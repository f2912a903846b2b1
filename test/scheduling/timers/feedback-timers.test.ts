import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../../src/domain/data-keys.ts';
import {
  cancelPendingFeedback,
  FEEDBACK_FOLLOWUP_NUDGE,
  FEEDBACK_INITIAL_NUDGE,
} from '../../../src/scheduling/timers/feedback-timers.ts';
import { createTimerHarness, HOUR, MINUTE, type TimerHarness } from './harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

/** What `generate_habit_prompt` with delivery_mode `immediate` does once the prompt is delivered. */
function immediatePrompt(participantId: string): Promise<void> {
  return harness.store.transaction(() =>
    harness.timers.turnHooks.onImmediatePrompt({ participantId, at: harness.clock.now() }),
  );
}

/** What the engine does after a FEEDBACK turn. */
function feedbackTurn(participantId: string): Promise<void> {
  return harness.store.transaction(() =>
    harness.timers.turnHooks.onFeedbackTurn({ participantId, at: harness.clock.now() }),
  );
}

async function feedbackJobs(participantId: string) {
  return (await harness.pendingJobs(participantId))
    .filter((job) => job.kind.startsWith('feedback_'))
    .map((job) => ({ kind: job.kind, key: job.dedupKey, runAt: job.runAt.toISOString() }));
}

describe('feedback timers (specification §Timers)', () => {
  it('an immediate prompt starts the chain: initial nudge after 15 minutes, follow-up 3 hours later', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    const promptedAt = harness.clock.now();
    await immediatePrompt(participant.id);

    expect(await feedbackJobs(participant.id)).toEqual([
      {
        kind: 'feedback_timeout',
        key: `feedback_timeout:${participant.id}`,
        runAt: new Date(promptedAt.getTime() + 15 * MINUTE).toISOString(),
      },
    ]);
    let data = await harness.data(participant.id);
    expect(data[DataKey.feedbackState]).toBe('waiting_initial');
    expect(data[DataKey.feedbackTimerID]).toBeDefined();

    await harness.advance(15 * MINUTE);
    expect(harness.sentTexts(participant.id)).toEqual([FEEDBACK_INITIAL_NUDGE]);
    expect(harness.messenger.sent[0]?.options).toEqual({ kind: 'proactive', module: 'FEEDBACK' });
    data = await harness.data(participant.id);
    expect(data[DataKey.feedbackState]).toBe('followup_sent');
    expect(data[DataKey.feedbackTimerID]).toBeUndefined();
    expect(await feedbackJobs(participant.id)).toEqual([
      {
        kind: 'feedback_followup',
        key: `feedback_followup:${participant.id}`,
        runAt: new Date(promptedAt.getTime() + 15 * MINUTE + 3 * HOUR).toISOString(),
      },
    ]);
    expect(data[DataKey.feedbackFollowupTimerID]).toBeDefined();

    await harness.advance(3 * HOUR);
    expect(harness.sentTexts(participant.id)).toEqual([FEEDBACK_INITIAL_NUDGE, FEEDBACK_FOLLOWUP_NUDGE]);
    data = await harness.data(participant.id);
    expect(data[DataKey.feedbackFollowupTimerID]).toBeUndefined();
    expect(data[DataKey.conversationHistory]).toContain(FEEDBACK_FOLLOWUP_NUDGE);
    expect(await feedbackJobs(participant.id)).toEqual([]);

    await harness.advance(24 * HOUR);
    expect(harness.sentTexts(participant.id)).toHaveLength(2);
  });

  it('a FEEDBACK turn before the timeout cancels both timers and completes feedback', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await immediatePrompt(participant.id);
    await harness.advance(10 * MINUTE);
    await feedbackTurn(participant.id);

    const data = await harness.data(participant.id);
    expect(data[DataKey.feedbackState]).toBe('completed');
    expect(data[DataKey.feedbackTimerID]).toBeUndefined();
    expect(data[DataKey.feedbackFollowupTimerID]).toBeUndefined();
    expect(await feedbackJobs(participant.id)).toEqual([]);
    await harness.advance(5 * HOUR);
    expect(harness.sentTexts(participant.id)).toEqual([]);
  });

  it('a FEEDBACK turn after the first nudge cancels the follow-up', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await immediatePrompt(participant.id);
    await harness.advance(20 * MINUTE);
    await harness.store.transaction((tx) => cancelPendingFeedback(tx, participant.id, harness.clock.now()));

    expect(await feedbackJobs(participant.id)).toEqual([]);
    await harness.advance(5 * HOUR);
    expect(harness.sentTexts(participant.id)).toEqual([FEEDBACK_INITIAL_NUDGE]);
    expect((await harness.data(participant.id))[DataKey.feedbackState]).toBe('completed');
  });

  it('a timer that finds feedback completed sends nothing', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await immediatePrompt(participant.id);
    // Completed without the jobs being cancelled (e.g. written by an older version): the handler re-checks.
    await harness.setData(participant.id, { [DataKey.feedbackState]: 'completed' });
    await harness.advance(5 * HOUR);
    expect(harness.sentTexts(participant.id)).toEqual([]);
    expect(await feedbackJobs(participant.id)).toEqual([]);
  });

  it('a new immediate prompt starts a new cycle: the old follow-up is cancelled', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await immediatePrompt(participant.id);
    await harness.advance(15 * MINUTE);
    await harness.advance(HOUR);
    await immediatePrompt(participant.id);

    expect((await feedbackJobs(participant.id)).map((job) => job.kind)).toEqual(['feedback_timeout']);
    expect((await harness.data(participant.id))[DataKey.feedbackState]).toBe('waiting_initial');
    await harness.advance(15 * MINUTE);
    expect(harness.sentTexts(participant.id)).toEqual([FEEDBACK_INITIAL_NUDGE, FEEDBACK_INITIAL_NUDGE]);
  });

  it('honours FEEDBACK_INITIAL_TIMEOUT and FEEDBACK_FOLLOWUP_DELAY', async () => {
    harness = await createTimerHarness({ feedbackInitialTimeoutMs: 5 * MINUTE, feedbackFollowupDelayMs: 30 * MINUTE });
    const participant = await harness.enrol();
    await immediatePrompt(participant.id);
    await harness.advance(5 * MINUTE);
    expect(harness.sentTexts(participant.id)).toEqual([FEEDBACK_INITIAL_NUDGE]);
    await harness.advance(30 * MINUTE);
    expect(harness.sentTexts(participant.id)).toEqual([FEEDBACK_INITIAL_NUDGE, FEEDBACK_FOLLOWUP_NUDGE]);
  });
});
