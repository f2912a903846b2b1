/**
 * Enrollment with a study design, in process: a store (SQLite in memory unless given), the real participant service
 * and outbox messenger, the fake conversation flow. Greetings are off: allocation is what these tests look at.
 */
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createParticipantService, type ParticipantService } from '../../src/participants/participant-service.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { parseStudyDesign, type StudyInForce } from '../../src/trials/study-design-file.ts';
import { createFakeConversationFlow } from '../support/fake-conversation-flow.ts';

export const TRIAL_START = new Date('2026-03-02T14:00:00.000Z');

export function designOf(yamlText: string): StudyInForce {
  return parseStudyDesign(yamlText, 'test-design.yaml');
}

export interface TrialFixture {
  store: Store;
  participants: ParticipantService;
}

export async function createTrialFixture(
  study: StudyInForce | undefined,
  options: { store?: Store; idPrefix?: string; channelNames?: string[] } = {},
): Promise<TrialFixture> {
  const store = options.store ?? (await createSqliteStore({ filename: ':memory:' }));
  const clock = createManualClock(TRIAL_START);
  const generated = sequentialIds();
  // Two fixtures on one database (two instances) must not make the same participant ids.
  const newId = (prefix: string) => `${options.idPrefix ?? ''}${generated(prefix)}`;
  const lock = createInProcessLock();
  const messenger = createOutboxMessenger({ store, clock, newId });
  const participants = createTrialParticipantService({
    store,
    messenger,
    lock,
    clock,
    newId,
    ...(options.channelNames ? { channelNames: options.channelNames } : {}),
    ...(study ? { study } : {}),
  });
  return { store, participants };
}

type TrialParticipantDependencies = Pick<
  Parameters<typeof createParticipantService>[0],
  'store' | 'messenger' | 'lock' | 'clock' | 'newId' | 'study' | 'channelNames'
>;

/** The real participant service as the trial tests run it: the fake conversation flow, US numbers, silent log. */
export function createTrialParticipantService(dependencies: TrialParticipantDependencies): ParticipantService {
  const { store, messenger, lock } = dependencies;
  return createParticipantService({
    ...dependencies,
    flow: createFakeConversationFlow({ messenger, lock, transcript: store.transcript }),
    log: silentLog,
    defaultCountry: 'US',
    prepTimeMinutes: 10,
  });
}

/** A distinct US number for the n-th enrollment. */
export function phoneFor(index: number, base = 5_550_000_000): string {
  return `+1${base + index}`;
}

/** How many of `arms` each arm id has. */
export function countArms(arms: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const arm of arms) counts[arm] = (counts[arm] ?? 0) + 1;
  return counts;
}

/** `Map.groupBy` (the type-checked library is ES2023). */
export function groupBy<Item, Key>(items: readonly Item[], keyOf: (item: Item) => Key): Map<Key, Item[]> {
  const groups = new Map<Key, Item[]>();
  for (const item of items) groups.set(keyOf(item), [...(groups.get(keyOf(item)) ?? []), item]);
  return groups;
}
