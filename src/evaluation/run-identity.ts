/**
 * Which evaluation run a report directory holds (`run.json`: an id made when the run starts, kept by `--resume` and by
 * `promptpipe eval-report`). What an id looks like, and how a rating names a run's conversation, is
 * research/ratings/eval-conversation.ts's.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_ID_PATTERN, type RunIdentity } from '../research/ratings/eval-conversation.ts';

/** `20261127-015012-a1b2c3`: sorts by start, and two runs started in the same second still differ. */
export function newRunId(now: Date, random: () => string = () => randomBytes(3).toString('hex')): string {
  const stamp = now.toISOString().slice(0, 19).replaceAll('-', '').replaceAll(':', '').replace('T', '-');
  return `${stamp}-${random()}`;
}

/** The run recorded in `outDir`, if any (an unreadable run.json counts as none). */
export function readRunIdentity(outDir: string): RunIdentity | undefined {
  const file = join(outDir, 'run.json');
  if (!existsSync(file)) return undefined;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<RunIdentity>;
    if (typeof value.id === 'string' && RUN_ID_PATTERN.test(value.id) && typeof value.startedAt === 'string') {
      return { id: value.id, startedAt: value.startedAt };
    }
  } catch {
    // Unreadable: a new identity replaces it.
  }
  return undefined;
}

export function createRunIdentity(now: Date = new Date()): RunIdentity {
  return { id: newRunId(now), startedAt: now.toISOString() };
}

export function saveRunIdentity(outDir: string, identity: RunIdentity): void {
  const file = join(outDir, 'run.json');
  writeFileSync(`${file}.partial`, `${JSON.stringify(identity, null, 2)}\n`);
  renameSync(`${file}.partial`, file);
}

/** The run of `outDir`: the one recorded there unless `fresh` (a new run overwrites the directory), else a new one. */
export function runIdentity(outDir: string, options: { fresh: boolean; now?: Date }): RunIdentity {
  const earlier = options.fresh ? undefined : readRunIdentity(outDir);
  if (earlier) return earlier;
  const identity = createRunIdentity(options.now);
  saveRunIdentity(outDir, identity);
  return identity;
}
