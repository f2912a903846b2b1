/**
 * What each participant's transcript holds after their latest message, for a store that is the only writer of its
 * database (SQLite: one process, see the state-directory lock), beside the flow-state and participant caches. Every
 * inbound message asks for it (`afterLastMessage`: the polls it may answer), a read of the participant's newest rows
 * that was among the costliest of a turn; this store appended those rows itself, so it can tell without the read.
 *
 * Correctness rests on these rules:
 * - Knowledge starts with a committed append that holds the participant's message (a turn records it): from then on
 *   the entries after it are known, and every later committed append of theirs extends or restarts what is known. A
 *   participant not known (not written since the process started, or forgotten) is read from the database, and the
 *   read is not kept: only appends teach the cache, so it never has to decide whether a read is older than a write.
 * - A transaction's appends count once it commits (a rollback, or an error after the commit, forgets the
 *   participants it wrote). Inside it, a participant it appended to is read from the database, which sees them.
 * - Appends are taken in the order of their ids; one that arrives out of order, or a purge, forgets the participant.
 * - Values are copied in and out, so a caller that mutates what it got cannot change the cache.
 *
 * Never use it for PostgreSQL: other processes write the same rows.
 */
import { LRUCache } from 'lru-cache';
import type { Store, TranscriptEntry, TranscriptRepository } from '../store.ts';

/** Participants kept; past this the least recently used are dropped. A few small entries each. */
const DEFAULT_CAPACITY = 1_000;
/** Entries kept after a participant's message; past this (broadcasts nobody answers) the participant is forgotten. */
const MAX_ENTRIES_AFTER_MESSAGE = 50;

interface Known {
  /** The newest entry id applied: appends are taken in id order. */
  lastId: number;
  /** Every entry after the participant's latest message, oldest first. */
  after: TranscriptEntry[];
}

function copy(entry: TranscriptEntry): TranscriptEntry {
  return { ...entry, createdAt: new Date(entry.createdAt.getTime()) };
}

/** Entries a transaction appended, by participant, oldest first; `null` once it purged the participant. */
type PendingAppends = Map<string, TranscriptEntry[] | null>;

export function withRecentTranscriptCache(store: Store, capacity: number = DEFAULT_CAPACITY): Store {
  const known = new LRUCache<string, Known>({ max: capacity });

  function remember(participantId: string, state: Known): void {
    if (state.after.length > MAX_ENTRIES_AFTER_MESSAGE) known.delete(participantId);
    else known.set(participantId, state);
  }

  /** Takes in a participant's committed entries, oldest first. */
  function apply(participantId: string, entries: readonly TranscriptEntry[]): void {
    let state = known.get(participantId);
    if (!state) {
      const message = entries.findLast((entry) => entry.role === 'user');
      if (!message) return;
      state = { lastId: message.id, after: [] };
    } else if (entries.some((entry) => entry.id <= state!.lastId)) {
      known.delete(participantId);
      return;
    }
    const after = [...state.after];
    let lastId = state.lastId;
    for (const entry of entries) {
      if (entry.id <= lastId) continue;
      if (entry.role === 'user') after.length = 0;
      else after.push(copy(entry));
      lastId = entry.id;
    }
    remember(participantId, { lastId, after });
  }

  function transcript(inner: TranscriptRepository, pending: PendingAppends | undefined): TranscriptRepository {
    return {
      ...inner,
      async append(entries) {
        const stored = await inner.append(entries);
        const byParticipant = new Map<string, TranscriptEntry[]>();
        for (const entry of stored) {
          const list = byParticipant.get(entry.participantId);
          if (list) list.push(copy(entry));
          else byParticipant.set(entry.participantId, [copy(entry)]);
        }
        for (const [participantId, list] of byParticipant) {
          if (!pending) apply(participantId, list);
          else if (pending.has(participantId)) pending.get(participantId)?.push(...list);
          else pending.set(participantId, list);
        }
        return stored;
      },
      async afterLastMessage(participantId, options) {
        const state = pending?.has(participantId) ? undefined : known.get(participantId);
        if (!state) return inner.afterLastMessage(participantId, options);
        return state.after.slice(Math.max(0, state.after.length - options.limit)).map(copy);
      },
      async purge(participantId) {
        known.delete(participantId);
        if (pending) pending.set(participantId, null);
        return inner.purge(participantId);
      },
    };
  }

  function transactionStore(tx: Store, pending: PendingAppends): Store {
    const wrapped: Store = {
      ...tx,
      transcript: transcript(tx.transcript, pending),
      // Nested calls join the transaction, and so its pending appends.
      transaction: (fn) => fn(wrapped),
    };
    return wrapped;
  }

  return {
    ...store,
    transcript: transcript(store.transcript, undefined),
    async transaction(fn) {
      const pending: PendingAppends = new Map();
      try {
        const result = await store.transaction((tx) => fn(transactionStore(tx as Store, pending)));
        for (const [participantId, entries] of pending) {
          if (entries) apply(participantId, entries);
          else known.delete(participantId);
        }
        return result;
      } catch (error) {
        // Rolled back, or perhaps committed with the error raised afterwards: either way the cache must not guess.
        for (const participantId of pending.keys()) known.delete(participantId);
        throw error;
      }
    },
    close: () => store.close(),
    ping: () => store.ping(),
    durable: () => store.durable(),
  };
}
