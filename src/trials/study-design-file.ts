/**
 * Reads and validates the study design file. YAML and JSON both go through the YAML parser (JSON is YAML 1.2), so
 * either kind of file gets errors that name the line and the field: "design.yaml line 12 (arms.1.weight): must be
 * positive". A design that does not validate stops the server at start-up: a trial must never run on a guess.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { isNode, LineCounter, parseDocument } from 'yaml';
import { AppError } from '../domain/errors.ts';
import { loadPromptDirectory } from '../engine/system-prompts.ts';
import { type StudyDesign, studyDesignSchema } from './study-design.ts';

/** The design in force: what `GET /study` returns and what every allocation and decision records the hash of. */
export interface StudyInForce {
  design: StudyDesign;
  /** SHA-256 (hex) of the canonical JSON of the validated design (defaults filled in). */
  hash: string;
  /** The prompts of each arm with a `prompt_dir`, read at start-up (their versions are in `llm_calls`). */
  armPrompts?: ReadonlyMap<string, ArmPrompts>;
}

export type ArmPrompts = ReturnType<typeof loadPromptDirectory>;

/**
 * JSON with the keys of every object sorted and no white space: the same design gives the same text however its file
 * was laid out (YAML or JSON, key order, comments), so the hash identifies the design, not its formatting.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, entry]) => entry !== undefined)
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function designHash(design: StudyDesign): string {
  return createHash('sha256').update(canonicalJson(design)).digest('hex');
}

/**
 * Parses and validates a design's text; `source` names it in errors (the file's path). An arm's `prompt_dir` is read
 * relative to `baseDirectory` (the design file's folder). Throws `invalid_input`.
 */
export function parseStudyDesign(text: string, source: string, baseDirectory = '.'): StudyInForce {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const lineOf = (offset: number | undefined): number | undefined =>
    offset === undefined ? undefined : lineCounter.linePos(offset).line;
  const syntax = document.errors[0];
  if (syntax) {
    const line = lineOf(syntax.pos[0]);
    throw new AppError('invalid_input', `${source}${line ? ` line ${line}` : ''}: ${syntax.message.split('\n')[0]}`);
  }
  const parsed = studyDesignSchema.safeParse(document.toJS());
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const field = issue.path.map(String).join('.');
      // The deepest node of the path that exists in the file: a missing field is reported at its parent's line.
      let line: number | undefined;
      for (let depth = issue.path.length; depth >= 0 && line === undefined; depth -= 1) {
        const node = depth === 0 ? document.contents : document.getIn(issue.path.slice(0, depth) as unknown[], true);
        if (isNode(node)) line = lineOf(node.range?.[0]);
      }
      const message =
        issue.code === 'invalid_type' && issue.message.endsWith('received undefined') ? 'is required' : issue.message;
      return `${source}${line ? ` line ${line}` : ''}${field ? ` (${field})` : ''}: ${message}`;
    });
    throw new AppError('invalid_input', `invalid study design: ${problems.join('; ')}`, {
      details: parsed.error.issues,
    });
  }
  const armPrompts = new Map<string, ArmPrompts>();
  parsed.data.arms.forEach((arm, index) => {
    if (!arm.prompt_dir) return;
    const node = document.getIn(['arms', index, 'prompt_dir'], true);
    const line = lineOf(isNode(node) ? node.range?.[0] : undefined);
    const setting = `${source}${line ? ` line ${line}` : ''} (arms.${index}.prompt_dir)`;
    armPrompts.set(arm.id, loadPromptDirectory(resolve(baseDirectory, arm.prompt_dir), setting));
  });
  return {
    design: parsed.data,
    hash: designHash(parsed.data),
    ...(armPrompts.size > 0 ? { armPrompts } : {}),
  };
}

/** Reads `STUDY_DESIGN_FILE`; a missing or unreadable file is an error naming it. */
export async function loadStudyDesign(path: string): Promise<StudyInForce> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new AppError('invalid_input', `STUDY_DESIGN_FILE: cannot read ${path}`, { cause: error });
  }
  return parseStudyDesign(text, path, dirname(path));
}
