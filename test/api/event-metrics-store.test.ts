import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics, type Metrics } from '../../src/observability/metrics.ts';
import { withEventMetrics } from '../../src/store/event-metrics-store.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';

let inner: Store;
let store: Store;
let metrics: Metrics;
beforeEach(async () => {
  inner = await createSqliteStore({ filename: ':memory:' });
  metrics = createMetrics();
  store = withEventMetrics(inner, metrics);
});
afterEach(async () => {
  await store.close();
});

describe('withEventMetrics', () => {
  it('counts state-changed events recorded on the store and inside (nested) transactions', async () => {
    const createdAt = new Date('2026-03-02T14:00:00Z');
    await store.events.record({
      type: 'state-changed',
      data: { from: 'INTAKE', to: 'FEEDBACK', source: 'tool' },
      createdAt,
    });
    await store.transaction(async (tx) => {
      await tx.events.record({
        type: 'state-changed',
        data: { from: 'FEEDBACK', to: 'INTAKE', source: 'admin' },
        createdAt,
      });
      await (tx as Store).transaction(async (nested) => {
        await nested.events.record({
          type: 'state-changed',
          data: { from: 'FEEDBACK', to: 'INTAKE', source: 'admin' },
          createdAt,
        });
      });
      await tx.events.record({ type: 'tool-called', data: { name: 'x' }, createdAt });
    });
    const text = await metrics.registry.metrics();
    expect(text).toContain('promptpipe_state_transitions_total{from="INTAKE",to="FEEDBACK",source="tool"} 1');
    expect(text).toContain('promptpipe_state_transitions_total{from="FEEDBACK",to="INTAKE",source="admin"} 2');
    expect(await inner.events.list()).toHaveLength(4);
  });

  it('counts an event of a transaction once it commits, and never one of a transaction that rolled back', async () => {
    const createdAt = new Date('2026-03-02T14:00:00Z');
    const counted = async () =>
      (await metrics.registry.getSingleMetricAsString('promptpipe_state_transitions_total')).includes(
        'from="INTAKE",to="FEEDBACK",source="tool"} 1',
      );
    await store.transaction(async (tx) => {
      await tx.events.record({
        type: 'state-changed',
        data: { from: 'INTAKE', to: 'FEEDBACK', source: 'tool' },
        createdAt,
      });
      expect(await counted()).toBe(false);
    });
    expect(await counted()).toBe(true);
    await expect(
      store.transaction(async (tx) => {
        await tx.events.record({
          type: 'state-changed',
          data: { from: 'FEEDBACK', to: 'DONE', source: 'tool' },
          createdAt,
        });
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    expect(await metrics.registry.metrics()).not.toContain('to="DONE"');
    expect(await inner.events.list()).toHaveLength(1);
  });
});
