import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { randomId, sequentialIds } from '../../src/domain/ids.ts';

describe('randomId', () => {
  it('makes a prefixed id of 32 hex digits, never the same twice', () => {
    const ids = Array.from({ length: 5_000 }, () => randomId('job'));
    for (const id of ids.slice(0, 20)) expect(id).toMatch(/^job_[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('orders ids made in different milliseconds as they were made, so the indexes they key grow at one end', async () => {
    const made: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      made.push(randomId('out'));
      await sleep(2);
    }
    expect([...made].sort()).toEqual(made);
  });
});

describe('sequentialIds', () => {
  it('counts per generator', () => {
    const newId = sequentialIds();
    expect([newId('job'), newId('out'), newId('job')]).toEqual(['job_1', 'out_2', 'job_3']);
  });
});
