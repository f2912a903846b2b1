import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../src/domain/data-keys.ts';
import type { ToolResult } from '../../src/engine/tool.ts';
import { createEngineHarness, type EngineHarness } from '../support/engine-harness.ts';

let harness: EngineHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function call(h: EngineHarness, args: Record<string, unknown>): Promise<ToolResult> {
  return h.registry.execute(
    { id: 'call_1', name: 'transition_state', arguments: JSON.stringify(args) },
    { participantId: h.participant.id, module: 'INTAKE', sourceMessageId: 'in_1' },
    ['transition_state'],
  );
}

describe('transition_state (specification §Tools)', () => {
  it('writes the sub-state, cancels a pending auto-feedback timer and records the change', async () => {
    harness = await createEngineHarness();
    const now = harness.clock.now();
    await harness.store.jobs.enqueue(
      {
        id: 'job_af',
        kind: 'auto_feedback',
        participantId: harness.participant.id,
        runAt: new Date(now.getTime() + 300_000),
        payload: {},
        dedupKey: `auto_feedback:${harness.participant.id}`,
      },
      now,
    );
    await harness.setData({ [DataKey.autoFeedbackTimerID]: 'job_af' });
    const result = await call(harness, { target_state: 'FEEDBACK', reason: 'intake complete' });
    expect(result).toMatchObject({ status: 'success', previous_state: 'INTAKE', current_state: 'FEEDBACK' });
    const data = await harness.data();
    expect(data[DataKey.conversationState]).toBe('FEEDBACK');
    expect(data[DataKey.autoFeedbackTimerID]).toBeUndefined();
    expect(await harness.store.jobs.listPending({ participantId: harness.participant.id })).toEqual([]);
    const [event] = await harness.store.events.list({ participantId: harness.participant.id, type: 'state-changed' });
    expect(event?.data).toMatchObject({
      from: 'INTAKE',
      to: 'FEEDBACK',
      reason: 'intake complete',
      cancelled_auto_feedback: true,
    });
    expect(event?.sourceMessageId).toBe('in_1');
  });

  it('rejects an unknown target state with a clear error and changes nothing', async () => {
    harness = await createEngineHarness();
    const result = await call(harness, { target_state: 'COORDINATOR' });
    expect(result.status).toBe('error');
    expect(result.message).toContain('target_state');
    expect((await harness.data())[DataKey.conversationState]).toBeUndefined();
  });

  it('says delayed transitions are unavailable when no delayed scheduler is wired', async () => {
    harness = await createEngineHarness();
    const result = await call(harness, { target_state: 'FEEDBACK', delay_minutes: 30 });
    expect(result.status).toBe('error');
    expect((await harness.data())[DataKey.conversationState]).toBeUndefined();
  });
});
