import * as crypto from 'node:crypto';

/** Makes ids. Injected everywhere an id is made, so tests can make them predictable. */
export type NewId = (prefix: string) => string;

/**
 * Time-ordered where Node has it (UUID version 7, Node ≥ 24.16): ids made one after another sort one after another,
 * so the indexes they key (jobs, deliveries, transcript) grow at their right edge. A random key lands on a random page
 * of each such index, and every insert then writes one more page at commit. The rest of the id is random, as before.
 */
const uuid: () => string = typeof crypto.randomUUIDv7 === 'function' ? crypto.randomUUIDv7 : crypto.randomUUID;

export const randomId: NewId = (prefix) => `${prefix}_${uuid().replaceAll('-', '')}`;

/** Deterministic ids for tests: `${prefix}_1`, `${prefix}_2`, … */
export function sequentialIds(): NewId {
  let counter = 0;
  return (prefix) => {
    counter += 1;
    return `${prefix}_${counter}`;
  };
}
