/**
 * A read cache of participants for a store that is the only writer of its database (SQLite: one process, see the
 * state-directory lock), beside the flow-state cache (flow-state-cache.ts). An inbound message looks its sender up by
 * phone number, then by id three times (the inbound service, the turn, the outbox); a daily prompt five times. Rows
 * change only through this repository's `create`, `update` and `delete`, and a phone number never changes.
 *
 * Correctness rests on three rules:
 * - A write outside a transaction forgets the participant; a write inside one forgets them when the outermost
 *   transaction ends, committed or rolled back, and until then the transaction reads them from the database. Other
 *   participants it reads from the cache: one connection runs one transaction at a time, so what is cached is what
 *   it would read.
 * - A read that raced with a write (the participant's generation moved while the query ran) is returned but not
 *   cached; misses are never cached (a sender may enrol the next moment).
 * - Values are copied in and out, so a caller that mutates what it got cannot change the cache.
 *
 * Never use it for PostgreSQL: other processes write the same rows.
 */
import { LRUCache } from 'lru-cache';
import type { Participant } from '../../domain/participant.ts';
import type { ParticipantRepository, Store } from '../store.ts';

/** Participants kept; past this the least recently used are dropped. Rows are small (a few hundred bytes). */
const DEFAULT_CAPACITY = 10_000;

function copy(participant: Participant): Participant {
  return {
    ...participant,
    enrolledAt: new Date(participant.enrolledAt.getTime()),
    createdAt: new Date(participant.createdAt.getTime()),
    updatedAt: new Date(participant.updatedAt.getTime()),
  };
}

export function withParticipantCache(store: Store, capacity: number = DEFAULT_CAPACITY): Store {
  const idByPhone = new Map<string, string>();
  const byId = new LRUCache<string, Participant>({
    max: capacity,
    // A participant dropped as least recently used takes their phone number's entry along (`forget` does its own).
    dispose: (dropped, _id, reason) => {
      if (reason === 'evict') idByPhone.delete(dropped.phoneNumber);
    },
  });
  /** Bumped on every write of a participant, so a read that overlapped one is not cached. */
  const generations = new Map<string, number>();
  /** Bumped on every write, for reads by phone number (whose participant is unknown until the read returns). */
  let writes = 0;

  const generationOf = (id: string): number => generations.get(id) ?? 0;
  function forget(id: string): void {
    const cached = byId.get(id);
    if (cached) idByPhone.delete(cached.phoneNumber);
    byId.delete(id);
    generations.set(id, generationOf(id) + 1);
    writes += 1;
  }
  function remember(participant: Participant): void {
    idByPhone.set(participant.phoneNumber, participant.id);
    byId.set(participant.id, copy(participant));
  }

  /** Outside a transaction: reads through the cache, writes forget at once. */
  function cachedParticipants(inner: ParticipantRepository): ParticipantRepository {
    return {
      ...inner,
      async get(id) {
        const hit = byId.get(id);
        if (hit) return copy(hit);
        const generation = generationOf(id);
        const participant = await inner.get(id);
        if (participant && generationOf(id) === generation) remember(participant);
        return participant;
      },
      async getByPhone(phoneNumber) {
        const id = idByPhone.get(phoneNumber);
        const hit = id === undefined ? undefined : byId.get(id);
        if (hit) return copy(hit);
        const before = writes;
        const participant = await inner.getByPhone(phoneNumber);
        if (participant && writes === before) remember(participant);
        return participant;
      },
      async create(participant) {
        try {
          await inner.create(participant);
        } finally {
          forget(participant.id);
        }
      },
      async update(id, patch) {
        try {
          return await inner.update(id, patch);
        } finally {
          forget(id);
        }
      },
      async delete(id) {
        try {
          return await inner.delete(id);
        } finally {
          forget(id);
        }
      },
    };
  }

  /**
   * Inside a transaction: a participant the transaction has not written reads as committed, from the cache; one it
   * wrote reads from the database (its own uncommitted row) and is forgotten when the transaction ends.
   */
  function transactionParticipants(inner: ParticipantRepository, written: Set<string>): ParticipantRepository {
    const committed = (id: string | undefined): Participant | undefined =>
      id === undefined || written.has(id) ? undefined : byId.get(id);
    return {
      ...inner,
      async get(id) {
        const hit = committed(id);
        return hit ? copy(hit) : inner.get(id);
      },
      async getByPhone(phoneNumber) {
        const hit = committed(idByPhone.get(phoneNumber));
        return hit ? copy(hit) : inner.getByPhone(phoneNumber);
      },
      async create(participant) {
        written.add(participant.id);
        await inner.create(participant);
      },
      async update(id, patch) {
        written.add(id);
        return inner.update(id, patch);
      },
      async delete(id) {
        written.add(id);
        return inner.delete(id);
      },
    };
  }

  function transactionStore(tx: Store, written: Set<string>): Store {
    const wrapped: Store = {
      ...tx,
      participants: transactionParticipants(tx.participants, written),
      // Nested calls join the transaction.
      transaction: (fn) => fn(wrapped),
    };
    return wrapped;
  }

  return {
    ...store,
    participants: cachedParticipants(store.participants),
    async transaction(fn) {
      const written = new Set<string>();
      try {
        return await store.transaction((tx) => fn(transactionStore(tx as Store, written)));
      } finally {
        for (const id of written) forget(id);
      }
    },
    close: () => store.close(),
    ping: () => store.ping(),
    durable: () => store.durable(),
  };
}
