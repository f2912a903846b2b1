/**
 * Counts state transitions from the audit log: a `Store` decorator that observes every `state-changed` event as it
 * is recorded. Every sub-state change in PromptPipe records that event (the transition tool, delayed transitions,
 * auto-feedback, the admin override, the engine's routing default), so counting here catches all of them without
 * each caller knowing about metrics.
 *
 * An event recorded in a transaction is counted when the transaction commits, and not at all if it rolls back.
 */

import type { Metrics } from '../observability/metrics.ts';
import type { EventRepository, NewEvent, Store, StoreRepositories } from './store.ts';

export const STATE_CHANGED_EVENT = 'state-changed';

export function withEventMetrics(store: Store, metrics: Pick<Metrics, 'recordStateTransition'>): Store {
  function observe(event: NewEvent): void {
    if (event.type !== STATE_CHANGED_EVENT) return;
    const text = (value: unknown): string => (typeof value === 'string' && value ? value : 'unknown');
    metrics.recordStateTransition(text(event.data['from']), text(event.data['to']), text(event.data['source']));
  }

  function observedEvents(events: EventRepository, afterCommit: Store['afterCommit']): EventRepository {
    return {
      async record(event) {
        await events.record(event);
        afterCommit(() => observe(event));
      },
      list: (filter) => events.list(filter),
    };
  }

  function observedRepositories(inner: Store): StoreRepositories {
    // Spread, so repositories added later pass through unobserved.
    return { ...inner, events: observedEvents(inner.events, (callback) => inner.afterCommit(callback)) };
  }

  /** The transaction's repositories are a `Store` too (nested calls join it); the wrapper keeps that true. */
  function observedStore(inner: Store): Store {
    return {
      ...observedRepositories(inner),
      dialect: inner.dialect,
      transaction: (fn) => inner.transaction((tx) => fn(observedStore(tx))),
      afterCommit: (callback) => inner.afterCommit(callback),
      ping: () => inner.ping(),
      durable: () => inner.durable(),
      close: () => inner.close(),
    };
  }

  return observedStore(store);
}
