import { randomUUID } from 'node:crypto';

/** Makes ids. Injected everywhere an id is made, so tests can make them predictable. */
export type NewId = (prefix: string) => string;

export const randomId: NewId = (prefix) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

/** Deterministic ids for tests: `${prefix}_1`, `${prefix}_2`, … */
export function sequentialIds(): NewId {
  let counter = 0;
  return (prefix) => {
    counter += 1;
    return `${prefix}_${counter}`;
  };
}
