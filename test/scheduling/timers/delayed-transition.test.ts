import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../../src/domain/data-keys.ts';
import { conversationStateOf } from '../../../src/domain/participant-data.ts';
import { createTransitionStateTool } from '../../../src/tools/transition-state-tool.ts';
import { createTimerHarness, MINUTE, type TimerHarness } from './harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

function transitionTool() {
  return createTransitionStateTool({
    store: harness.store,
    clock: harness.clock,
    delayedTransitions: harness.timers.delayedTransitions,
  });
}

function context(participantId: string) {
  return { participantId, module: 'INTAKE' as const, sourceMessageId: 'in_7' };
}

describe('delayed state transitions (specification §Timers, scenario 5)', () => {
  it('transition_state with delay_minutes=30 schedules the transition instead of making it, and it happens 30 minutes later', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    const scheduledAt = harness.clock.now();
    const result = await transitionTool().execute(
      { target_state: 'FEEDBACK', delay_minutes: 30, reason: 'check in after the walk' },
      context(participant.id),
    );

    expect(result).toMatchObject({
      status: 'success',
      scheduled_for: new Date(scheduledAt.getTime() + 30 * MINUTE).toISOString(),
    });
    let data = await harness.data(participant.id);
    expect(conversationStateOf(data)).toBe('INTAKE');
    const [job] = await harness.pendingJobs(participant.id);
    expect(job).toMatchObject({
      kind: 'state_transition',
      dedupKey: `state_transition:${participant.id}`,
      payload: { target_state: 'FEEDBACK', reason: 'check in after the walk', source_message_id: 'in_7' },
    });
    expect(data[DataKey.stateTransitionTimerID]).toBe(job?.id);

    await harness.advance(30 * MINUTE - 1);
    expect(conversationStateOf(await harness.data(participant.id))).toBe('INTAKE');
    await harness.advance(1);
    data = await harness.data(participant.id);
    expect(conversationStateOf(data)).toBe('FEEDBACK');
    expect(data[DataKey.stateTransitionTimerID]).toBeUndefined();
    const [event] = await harness.events(participant.id, 'state-changed');
    expect(event).toMatchObject({
      data: { from: 'INTAKE', to: 'FEEDBACK', source: 'delayed-transition', reason: 'check in after the walk' },
      sourceMessageId: 'in_7',
    });
  });

  it('a second delayed transition replaces the first: only the latest fires', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    const tool = transitionTool();
    await tool.execute({ target_state: 'FEEDBACK', delay_minutes: 10 }, context(participant.id));
    await tool.execute({ target_state: 'INTAKE', delay_minutes: 60 }, context(participant.id));
    expect(await harness.pendingJobs(participant.id)).toHaveLength(1);

    await harness.advance(2 * 60 * MINUTE);
    const events = await harness.events(participant.id, 'state-changed');
    expect(events.map((event) => event.data['to'])).toEqual(['INTAKE']);
  });

  it('a delayed transition cancels a pending auto-feedback timer when it fires, like any transition', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    await transitionTool().execute({ target_state: 'INTAKE', delay_minutes: 1 }, context(participant.id));
    await harness.sendScheduledPrompt(participant.id);
    await harness.advance(MINUTE);
    expect((await harness.pendingJobs(participant.id)).map((job) => job.kind)).not.toContain('auto_feedback');
    await harness.advance(10 * MINUTE);
    expect(conversationStateOf(await harness.data(participant.id))).toBe('INTAKE');
  });
});
