/**
 * A read cache of flow states for a store that is the only writer of its database (SQLite: one process, see the
 * state-directory lock). A turn reads the participant's flow state a dozen times (routing, context, profile, tools),
 * each a query and a parse of the row (≈ 1 kB; ≈ 10 kB while it held the working history, before migration 016); with
 * the cache, only the first read of a participant goes to the database.
 *
 * Correctness rests on three rules:
 * - A write outside a transaction invalidates the entry; a write inside one is kept aside and becomes the cached
 *   value only when the outermost transaction commits (a rollback discards it). Reads inside a transaction see its
 *   own writes first.
 *   Inside a transaction, a participant's state also reaches the database once, when the transaction's work is done
 *   and before it commits, however often it changed: a daily prompt's bookkeeping changes it a dozen times, and each
 *   write would serialise and store the whole row again. A deletion is carried out at once and cancels the held
 *   write. Nothing outside the transaction can tell: its writes are visible only after the commit either way.
 * - Deleting a participant (whose flow state the database deletes by cascade) invalidates the entry.
 * - A read that raced with a write (the entry's generation moved while the query ran) is returned but not cached.
 * Values are copied in and out, so a caller that mutates what it got cannot change the cache.
 *
 * Never use it for PostgreSQL: other processes write the same rows.
 */
import { LRUCache } from 'lru-cache';
import type { FlowState } from '../domain/flow-state.ts';
import {
  copyFlowState as copy,
  ownWrite,
  type PendingWrites,
  withHeldFlowStateWrites,
} from './held-flow-state-writes.ts';
import type { FlowStateRepository, ParticipantRepository, Store } from './store.ts';

/**
 * Participants whose state is kept; past this the least recently used are dropped. The cache serves the dozen reads of
 * one turn and the turns of participants who are writing now, so it only needs to cover what is in flight; bounding
 * it keeps the heap small in a large study.
 */
const DEFAULT_CAPACITY = 1_000;

export function withFlowStateCache(store: Store, capacity: number = DEFAULT_CAPACITY): Store {
  const cached = new LRUCache<string, FlowState>({ max: capacity });
  /** Bumped on every write and invalidation of a participant, so a read that overlapped one is not cached. */
  const generations = new Map<string, number>();

  const generationOf = (participantId: string): number => generations.get(participantId) ?? 0;
  function invalidate(participantId: string): void {
    cached.delete(participantId);
    generations.set(participantId, generationOf(participantId) + 1);
  }
  function remember(participantId: string, state: FlowState): void {
    cached.set(participantId, copy(state));
  }

  function flowStates(inner: FlowStateRepository, pending: PendingWrites | undefined): FlowStateRepository {
    return {
      async get(participantId) {
        const own = ownWrite(pending, participantId);
        if (own) return own.state;
        const hit = cached.get(participantId);
        if (hit) return copy(hit);
        const generation = generationOf(participantId);
        const state = await inner.get(participantId);
        if (state && generationOf(participantId) === generation) remember(participantId, state);
        return state;
      },
      async save(state) {
        if (pending) {
          pending.set(state.participantId, copy(state));
          return;
        }
        await inner.save(state);
        invalidate(state.participantId);
      },
      async delete(participantId) {
        await inner.delete(participantId);
        if (pending) pending.set(participantId, null);
        else invalidate(participantId);
      },
    };
  }

  function participants(inner: ParticipantRepository, pending: PendingWrites | undefined): ParticipantRepository {
    return {
      ...inner,
      async delete(id) {
        const deleted = await inner.delete(id);
        if (pending) pending.set(id, null);
        else invalidate(id);
        return deleted;
      },
    };
  }

  return withHeldFlowStateWrites(store, {
    flowStates,
    participants,
    committed(pending) {
      for (const [participantId, state] of pending) {
        invalidate(participantId);
        if (state) remember(participantId, state);
      }
    },
    failed(pending) {
      for (const participantId of pending.keys()) invalidate(participantId);
    },
  });
}
