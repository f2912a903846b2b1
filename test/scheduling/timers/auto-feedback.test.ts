import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../../src/domain/data-keys.ts';
import { conversationStateOf } from '../../../src/domain/participant-data.ts';
import { transitionConversationState } from '../../../src/engine/state-transition.ts';
import { createTimerHarness, MINUTE, type TimerHarness } from './harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

async function autoFeedbackJobs(participantId: string) {
  return (await harness.pendingJobs(participantId)).filter((job) => job.kind === 'auto_feedback');
}

describe('auto-feedback enforcement (specification §Timers, scenario 11)', () => {
  it('5 minutes after a scheduled prompt without a reply, the conversation moves to FEEDBACK', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    const sentAt = await harness.sendScheduledPrompt(participant.id);

    const [job] = await autoFeedbackJobs(participant.id);
    expect(job?.dedupKey).toBe(`auto_feedback:${participant.id}`);
    expect(job?.runAt).toEqual(new Date(sentAt.getTime() + 5 * MINUTE));
    expect((await harness.data(participant.id))[DataKey.autoFeedbackTimerID]).toBe(job?.id);

    await harness.advance(5 * MINUTE - 1);
    expect(conversationStateOf(await harness.data(participant.id))).toBe('INTAKE');
    await harness.advance(1);
    const data = await harness.data(participant.id);
    expect(conversationStateOf(data)).toBe('FEEDBACK');
    expect(data[DataKey.autoFeedbackTimerID]).toBeUndefined();
    const [event] = await harness.events(participant.id, 'state-changed');
    expect(event?.data).toMatchObject({ from: 'INTAKE', to: 'FEEDBACK', source: 'auto-feedback' });
  });

  it('an immediate transition before then cancels it (the reply was routed and handled)', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(2 * MINUTE);
    const outcome = await transitionConversationState(harness.store, {
      participantId: participant.id,
      target: 'INTAKE',
      source: 'tool',
      now: harness.clock.now(),
    });
    expect(outcome.cancelledAutoFeedback).toBe(true);
    expect(await autoFeedbackJobs(participant.id)).toHaveLength(0);

    await harness.advance(10 * MINUTE);
    expect(conversationStateOf(await harness.data(participant.id))).toBe('INTAKE');
    expect(await harness.events(participant.id, 'state-changed')).toHaveLength(1);
  });

  it('an immediate transition committed after the runner claimed the timer still wins: the timer is stale', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    const [job] = await autoFeedbackJobs(participant.id);
    harness.clock.set(job?.runAt ?? new Date());
    await harness.whileClaimed(participant.id, job?.id ?? '', async () => {
      const outcome = await transitionConversationState(harness.store, {
        participantId: participant.id,
        target: 'INTAKE',
        source: 'tool',
        now: harness.clock.now(),
      });
      // Too late to cancel the job (it is running), but the timer id is cleared.
      expect(outcome.cancelledAutoFeedback).toBe(false);
    });
    expect(conversationStateOf(await harness.data(participant.id))).toBe('INTAKE');
    expect((await harness.events(participant.id, 'state-changed')).map((event) => event.data['source'])).toEqual([
      'tool',
    ]);
  });

  it('skips when the conversation is already in FEEDBACK', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.setData(participant.id, { [DataKey.conversationState]: 'FEEDBACK' });
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(5 * MINUTE);

    const data = await harness.data(participant.id);
    expect(conversationStateOf(data)).toBe('FEEDBACK');
    expect(data[DataKey.autoFeedbackTimerID]).toBeUndefined();
    expect(await harness.events(participant.id, 'state-changed')).toHaveLength(0);
  });

  it('skips when a newer prompt was sent within the last 4.5 minutes (its own timer enforces it)', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    // A prompt recorded 4 minutes in, as by a sender that does not re-arm the timer.
    await harness.advance(4 * MINUTE);
    await harness.setData(participant.id, { [DataKey.lastPromptSentAt]: harness.clock.now().toISOString() });
    await harness.advance(MINUTE);

    expect(conversationStateOf(await harness.data(participant.id))).toBe('INTAKE');
    expect(await harness.events(participant.id, 'state-changed')).toHaveLength(0);
  });

  it('a second prompt re-arms the timer: enforcement happens 5 minutes after the newest prompt', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(3 * MINUTE);
    const secondSentAt = await harness.sendScheduledPrompt(participant.id);
    expect(await autoFeedbackJobs(participant.id)).toHaveLength(1);

    await harness.advance(4 * MINUTE);
    expect(conversationStateOf(await harness.data(participant.id))).toBe('INTAKE');
    await harness.advance(MINUTE);
    expect(harness.clock.now().getTime()).toBe(secondSentAt.getTime() + 5 * MINUTE);
    expect(conversationStateOf(await harness.data(participant.id))).toBe('FEEDBACK');
  });

  it('AUTO_FEEDBACK_AFTER_PROMPT_ENABLED=false schedules nothing', async () => {
    harness = await createTimerHarness({ autoFeedbackAfterPromptEnabled: false });
    const participant = await harness.enrol();
    await harness.sendScheduledPrompt(participant.id);
    expect(await autoFeedbackJobs(participant.id)).toHaveLength(0);
    await harness.advance(30 * MINUTE);
    expect(conversationStateOf(await harness.data(participant.id))).toBe('INTAKE');
  });
});
