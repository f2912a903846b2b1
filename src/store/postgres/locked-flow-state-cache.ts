/**
 * Flow states kept in memory while this instance holds the participant's lock (PostgreSQL).
 *
 * Several instances write the same rows, so nothing can be cached for long; but while an instance holds a participant's
 * advisory lock (postgres-coordinator.ts), no other instance runs that participant's turns or timers, and the state it
 * read is the state. A turn reads it about eight times and a daily prompt about twenty (routing, context, profile,
 * tools, bookkeeping), each a round trip; with this cache the first read of a lock's hold goes to the database.
 * Writes inside a transaction are held and written once, the last value, before it commits (a daily prompt changed
 * the row a dozen times, each an upsert of the whole row); nothing outside the transaction can tell.
 *
 * The rules (as in the SQLite cache, flow-state-cache.ts): a transaction's reads see its own writes first; its writes
 * reach the cache only when it commits (a rollback or an error clears the participant's entry); a deletion goes to the
 * database at once; deleting a participant clears the entry. Values are copied in and out. The cache lives and dies
 * with the lock's hold (`LockScope`): work started in the background under the lock and outlasting it reads the
 * database. A write by something that does not take the lock (an operator's edit from the dashboard during the
 * participant's turn) may be overwritten by the turn, as it would be without the cache.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FlowState } from '../../domain/flow-state.ts';
import {
  copyFlowState as copy,
  ownWrite,
  type PendingWrites,
  withHeldFlowStateWrites,
} from '../held-flow-state-writes.ts';
import type { FlowStateRepository, ParticipantRepository, Store } from '../store.ts';

/** The participants whose lock the current asynchronous flow holds, each with its cached state. */
export interface LockScope {
  /** False once the lock is released: background work must not use the cache any more. */
  active: boolean;
  readonly participantId: string;
  /** Undefined: not read yet; null: read, and there is none. */
  state: FlowState | null | undefined;
}

const scopes = new AsyncLocalStorage<readonly LockScope[]>();

/** Runs `work` with `participantId`'s flow state cacheable; called by the coordinator while it holds the lock. */
export async function withLockScope<T>(participantId: string, work: () => Promise<T>): Promise<T> {
  const scope: LockScope = { active: true, participantId, state: undefined };
  const current = (scopes.getStore() ?? []).filter((entry) => entry.active && entry.participantId !== participantId);
  try {
    return await scopes.run([...current, scope], work);
  } finally {
    scope.active = false;
  }
}

function scopeOf(participantId: string): LockScope | undefined {
  return scopes.getStore()?.find((entry) => entry.active && entry.participantId === participantId);
}

function remember(participantId: string, state: FlowState | null | undefined): void {
  const scope = scopeOf(participantId);
  if (scope) scope.state = state === null || state === undefined ? state : copy(state);
}

function flowStates(inner: FlowStateRepository, pending: PendingWrites | undefined): FlowStateRepository {
  return {
    async get(participantId) {
      const own = ownWrite(pending, participantId);
      if (own) return own.state;
      const scope = scopeOf(participantId);
      if (scope?.state !== undefined) return scope.state === null ? undefined : copy(scope.state);
      const state = await inner.get(participantId);
      // Inside a transaction too: its writes are held until it ends, so what the database returns is the committed
      // row, whether the transaction commits or not.
      if (scope?.active) scope.state = state ? copy(state) : null;
      return state;
    },
    async save(state) {
      if (pending) {
        pending.set(state.participantId, copy(state));
        return;
      }
      remember(state.participantId, undefined);
      await inner.save(state);
      remember(state.participantId, state);
    },
    async delete(participantId) {
      remember(participantId, undefined);
      await inner.delete(participantId);
      if (pending) pending.set(participantId, null);
      else remember(participantId, null);
    },
  };
}

function participants(inner: ParticipantRepository, pending: PendingWrites | undefined): ParticipantRepository {
  return {
    ...inner,
    async delete(id) {
      remember(id, undefined);
      const deleted = await inner.delete(id);
      if (pending) pending.set(id, null);
      else remember(id, null);
      return deleted;
    },
  };
}

export function withLockedFlowStateCache(store: Store): Store {
  return withHeldFlowStateWrites(store, {
    flowStates,
    participants,
    committed(pending) {
      for (const [participantId, state] of pending) remember(participantId, state);
    },
    failed(pending) {
      for (const participantId of pending.keys()) remember(participantId, undefined);
    },
  });
}
