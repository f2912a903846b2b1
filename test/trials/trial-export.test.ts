/**
 * The study export of a trial: `allocations` holds every allocation with what recomputes it and the override,
 * `daily_outcomes` carries the arm, and the codebook documents both.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportToDirectory } from '../../src/research/export/export-to-directory.ts';
import { type ArmRig, createArmRig, DAY, study } from './arm-rig.ts';

let rig: ArmRig | undefined;
let directory = '';
afterEach(async () => {
  await rig?.runner.stop();
  await rig?.store.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

async function jsonLines(file: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the export of a trial', () => {
  it('writes the allocations, the arm of each daily outcome, and documents both', async () => {
    rig = await createArmRig();
    const staticId = await rig.enrollInArm('static', 1);
    const coachId = await rig.enrollInArm('coach', 2);
    await rig.advance(DAY);
    directory = await mkdtemp(join(tmpdir(), 'promptpipe-trial-export-'));
    await exportToDirectory({
      directory,
      format: 'jsonl',
      context: {
        store: rig.store,
        filter: { participantIds: [], since: undefined },
        pseudonymizer: undefined,
        defaultChannel: 'webhook',
      },
      version: 'test',
      exportedAt: new Date('2026-03-06T00:00:00Z'),
    });

    const allocations = await jsonLines(join(directory, 'allocations.jsonl'));
    expect(allocations.map((row) => [row['participant_id'], row['arm']]).sort()).toEqual(
      [
        [staticId, 'static'],
        [coachId, 'coach'],
      ].sort(),
    );
    for (const row of allocations) {
      expect(row).toMatchObject({
        study_id: 'arms-trial',
        design_hash: study.hash,
        method: 'simple',
        stratum_sequence: expect.any(Number),
        override_reason: 'test arm',
      });
      expect(typeof row['allocated_arm']).toBe('string');
      expect(typeof row['draw']).toBe('number');
    }

    const outcomes = await jsonLines(join(directory, 'daily_outcomes.jsonl'));
    expect(outcomes.find((row) => row['participant_id'] === staticId)?.['arm']).toBe('static');
    expect(outcomes.find((row) => row['participant_id'] === coachId)?.['arm']).toBe('coach');

    const codebook = await readFile(join(directory, 'codebook.md'), 'utf8');
    expect(codebook).toContain('allocations');
    expect(codebook).toContain('| stratum_sequence | integer |');
    expect(codebook).toContain('| override_reason | string |');
    expect(codebook).toMatch(/\| arm \| string \| The trial arm in force at export/);
  });
});
