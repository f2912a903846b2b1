/**
 * An evaluation run's identity (its id, made when `promptpipe eval` starts the run, and its start) and how a human
 * rating names one conversation of one run in the study database: `eval:<run id>:<configuration>/<persona>.<repeat>`,
 * so a rating always matches the run, configuration and persona it was given for, and ratings of a later run of the
 * same personas are never mixed in. Pure.
 */

export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;

export interface RunIdentity {
  id: string;
  /** When the run started (wall clock, ISO 8601). */
  startedAt: string;
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
