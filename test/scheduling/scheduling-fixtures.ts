/**
 * Shared pieces of the scheduling tests: an in-memory SQLite store, a manual clock, enrolled participants and a
 * scripted habit-prompt generator that records its calls.
 */
import type { Participant } from '../../src/domain/participant.ts';
import type { HabitPromptGenerator, HabitPromptOutcome } from '../../src/engine/habit-prompt-generator.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';

export async function createMemoryStore(): Promise<Store> {
  return createSqliteStore({ filename: ':memory:' });
}

export async function enrollParticipant(
  store: Store,
  now: Date,
  overrides: Partial<Participant> = {},
): Promise<Participant> {
  const participant: Participant = {
    id: 'p_1',
    phoneNumber: '+15145550101',
    name: 'Alex',
    gender: '',
    ethnicity: '',
    background: '',
    timezone: '',
    channel: '',
    status: 'active',
    enrolledAt: now,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
  await store.participants.create(participant);
  return participant;
}

export interface FakePromptGenerator extends HabitPromptGenerator {
  readonly calls: { participantId: string; deliveryMode: string }[];
}

/**
 * Answers each call with the next outcome of `outcomes` (the last one repeats); a string is a generated prompt,
 * an Error is thrown.
 */
export function createFakePromptGenerator(outcomes: (string | Error | HabitPromptOutcome)[]): FakePromptGenerator {
  const calls: { participantId: string; deliveryMode: string }[] = [];
  return {
    calls,
    async generate(participantId, options) {
      calls.push({ participantId, deliveryMode: options.deliveryMode });
      const outcome = outcomes[Math.min(calls.length - 1, outcomes.length - 1)] ?? 'Your habit prompt.';
      if (outcome instanceof Error) throw outcome;
      if (typeof outcome === 'string') return { ok: true, prompt: outcome, warnings: [] };
      return outcome;
    },
  };
}

/** A [0, 1) generator with a fixed seed (mulberry32), so "random" schedules are repeatable. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export const minutes = (count: number): number => count * 60_000;
export const hours = (count: number): number => count * 3_600_000;
