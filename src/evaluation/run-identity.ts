/**
 * Which evaluation run a report directory holds (`run.json`: an id made when the run starts, kept by `--resume` and by
 * `promptpipe eval-report`), and how a human rating names one conversation of one run in the study database:
 * `eval:<run id>:<configuration>/<persona>.<repeat>`, so a rating always matches the run, configuration and persona
 * it was given for, and ratings of a later run of the same personas are never mixed in.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;

export interface RunIdentity {
  id: string;
  /** When the run started (wall clock, ISO 8601). */
  startedAt: string;
}

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

export interface EvalConversationRef {
  runId: string;
  configuration: string;
  persona: string;
  repeat: number;
  /** `A/ada.1`: the conversation's name within its run (report, file names, progress lines). */
  key: string;
}

/** The ratings table's `conversation` of one conversation of an evaluation run. */
export function evalConversation(runId: string, key: string): string {
  return `eval:${runId}:${key}`;
}

const KEY_PATTERN = /^([^/:]+)\/([a-z0-9-]+)\.([0-9]+)$/;

/** `A/ada.1` → its parts; undefined for anything else. */
export function parseConversationKey(key: string): Omit<EvalConversationRef, 'runId'> | undefined {
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  return { configuration: match[1] ?? '', persona: match[2] ?? '', repeat: Number(match[3]), key };
}

/** `eval:<run>:A/ada.1` → its parts; undefined for a study conversation (`participant:<id>`) or anything else. */
export function parseEvalConversation(conversation: string): EvalConversationRef | undefined {
  if (!conversation.startsWith('eval:')) return undefined;
  const rest = conversation.slice('eval:'.length);
  const colon = rest.indexOf(':');
  if (colon < 0) return undefined;
  const runId = rest.slice(0, colon);
  const key = parseConversationKey(rest.slice(colon + 1));
  return RUN_ID_PATTERN.test(runId) && key ? { runId, ...key } : undefined;
}
