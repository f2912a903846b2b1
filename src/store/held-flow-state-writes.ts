/**
 * What the two flow-state caches (flow-state-cache.ts for SQLite, postgres/locked-flow-state-cache.ts) share: copying
 * states in and out, and the transaction wrapper that holds a transaction's flow-state writes and writes each changed
 * state once, its last value, before the commit. Each cache decides how its repositories read and remember, and what
 * a commit or a failure does to its entries.
 */
import type { FlowState } from '../domain/flow-state.ts';
import type { FlowStateRepository, ParticipantRepository, Store } from './store.ts';

export function copyFlowState(state: FlowState): FlowState {
  return {
    ...state,
    stateData: { ...state.stateData },
    createdAt: new Date(state.createdAt.getTime()),
    updatedAt: new Date(state.updatedAt.getTime()),
  };
}

/**
 * Writes of one transaction, by participant: the state as it will be committed (not yet written to the database), or
 * null for a deletion (already carried out).
 */
export type PendingWrites = Map<string, FlowState | null>;

/** The transaction's own write of the participant, if it made one: its state (undefined after a deletion). */
export function ownWrite(
  pending: PendingWrites | undefined,
  participantId: string,
): { state: FlowState | undefined } | undefined {
  if (!pending?.has(participantId)) return undefined;
  const written = pending.get(participantId);
  return { state: written ? copyFlowState(written) : undefined };
}

/** How one cache wraps the repositories (pending: the transaction's held writes, undefined outside one). */
export interface FlowStateCacheParts {
  flowStates(inner: FlowStateRepository, pending: PendingWrites | undefined): FlowStateRepository;
  participants(inner: ParticipantRepository, pending: PendingWrites | undefined): ParticipantRepository;
  /** After the outermost transaction committed. */
  committed(pending: PendingWrites): void;
  /** Rolled back, or perhaps committed with the error raised afterwards: the cache must not guess. */
  failed(pending: PendingWrites): void;
}

export function withHeldFlowStateWrites(store: Store, parts: FlowStateCacheParts): Store {
  function transactionStore(tx: Store, pending: PendingWrites): Store {
    const wrapped: Store = {
      ...tx,
      flowStates: parts.flowStates(tx.flowStates, pending),
      participants: parts.participants(tx.participants, pending),
      // Nested calls join the transaction, and so its pending writes.
      transaction: (fn) => fn(wrapped),
    };
    return wrapped;
  }

  return {
    ...store,
    flowStates: parts.flowStates(store.flowStates, undefined),
    participants: parts.participants(store.participants, undefined),
    async transaction(fn) {
      const pending: PendingWrites = new Map();
      try {
        const result = await store.transaction(async (tx) => {
          const value = await fn(transactionStore(tx, pending));
          // Each state the transaction changed, once: its last value; inside the transaction, before the commit.
          for (const state of pending.values()) {
            if (state) await tx.flowStates.save(state);
          }
          return value;
        });
        parts.committed(pending);
        return result;
      } catch (error) {
        parts.failed(pending);
        throw error;
      }
    },
    close: () => store.close(),
    ping: () => store.ping(),
    durable: () => store.durable(),
  };
}
