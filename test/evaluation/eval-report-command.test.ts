/**
 * `promptpipe eval-report` refuses what it cannot use, with a clear error and without writing anything: no source of
 * ratings, a directory that holds no run, a run that has not finished, and a ratings file with an unusable row.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/cli.ts';
import { runEvalReportCommand } from '../../src/cli/eval-report-command.ts';
import { readHumanRatings } from '../../src/evaluation/human-ratings-file.ts';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function workspace(): string {
  const directory = mkdtempSync(join(tmpdir(), 'promptpipe-eval-report-'));
  directories.push(directory);
  return directory;
}

const io: CliIo = {
  stdin: process.stdin,
  stdout: { write: () => true } as unknown as NodeJS.WritableStream,
  stderr: { write: () => true } as unknown as NodeJS.WritableStream,
  onSignal: () => {},
  exit: () => {},
};
const noStudy = async () => {
  throw new Error('the study database is not asked for');
};

describe('promptpipe eval-report', () => {
  it('refuses no ratings source, a directory without a run, and an unfinished run; writes nothing', async () => {
    const out = workspace();
    await expect(runEvalReportCommand({ out }, io, noStudy)).rejects.toThrow(/--study-ratings, --ratings <file>/);
    await expect(runEvalReportCommand({ out, ratings: 'x.csv' }, io, noStudy)).rejects.toThrow(/no plan.json/);
    const plan = {
      days: 1,
      repeats: 1,
      personas: [{ id: 'ada' }],
      configurations: [{ label: 'A' }],
      rubric: {
        name: 'test rubric',
        scale: { min: 1, max: 5 },
        criteria: [{ id: 'empathy', name: 'E', description: 'd' }],
      },
      judged: true,
    };
    writeFileSync(join(out, 'plan.json'), JSON.stringify(plan));
    mkdirSync(join(out, 'conversations', 'A'), { recursive: true });
    await expect(runEvalReportCommand({ out, ratings: 'x.csv' }, io, noStudy)).rejects.toThrow(
      /conversation A\/ada\.1 has not finished/,
    );
    expect(readdirSync(out).sort()).toEqual(['conversations', 'plan.json']);
  });

  it('refuses a ratings file with a row that has no integer score', async () => {
    const out = workspace();
    const file = join(out, 'ratings.csv');
    writeFileSync(file, 'conversation,criterion,score\neval:run-1:A/ada.1,empathy,4\nA/ada.1,empathy,four\n');
    expect(() => readHumanRatings(file)).toThrow('--ratings: row 3 needs conversation, criterion and an integer score');
    writeFileSync(join(out, 'ratings.jsonl'), '{"conversation":"A/ada.1","criterion":"empathy","score":3}\n[1]\n');
    expect(() => readHumanRatings(join(out, 'ratings.jsonl'))).toThrow('--ratings: line 2 is not a JSON object');
  });
});
