/**
 * Reads what `promptpipe eval` wrote back, for the dashboard's rating of a run: the report directories under the
 * reports directory (`EVAL_REPORTS_DIR`: that directory itself and each directory in it holding a report.json), and
 * one run's report.json (its id, rubric, summary and transcripts), checked before use. A report that cannot be used
 * says why instead of breaking the list.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ConversationLine } from './conversation-line.ts';
import { RUN_ID_PATTERN, type RunIdentity } from './eval-conversation.ts';
import { type Rubric, rubricSchema } from './rubric.ts';

const lineSchema = z.object({
  at: z.string(),
  from: z.enum(['coach', 'persona']),
  text: z.string(),
  kind: z.string(),
  module: z.string().optional(),
  pollOptions: z.array(z.string()).optional(),
  mark: z.string().optional(),
});

const reportSchema = z.object({
  run: z.object({ id: z.string().regex(RUN_ID_PATTERN), startedAt: z.string() }),
  rubric: rubricSchema,
  summary: z.object({
    days: z.number(),
    repeats: z.number(),
    configurations: z.array(z.object({ label: z.string() }).passthrough()),
    passed: z.boolean(),
  }),
  conversations: z.array(
    z.object({
      conversation: z.string(),
      persona: z.string(),
      configuration: z.string(),
      repeat: z.number().int(),
      scores: z.record(z.string(), z.object({ score: z.number(), reason: z.string() })),
      timezone: z.string(),
      language: z.string(),
      lines: z.array(lineSchema),
    }),
  ),
});

export interface RunReportConversation {
  /** `A/ada.1`. */
  conversation: string;
  persona: string;
  configuration: string;
  repeat: number;
  scores: Record<string, { score: number; reason: string }>;
  timezone: string;
  language: string;
  lines: ConversationLine[];
}

export interface RunReport {
  directory: string;
  run: RunIdentity;
  rubric: Rubric;
  summary: { days: number; repeats: number; configurations: { label: string }[]; passed: boolean };
  conversations: RunReportConversation[];
}

export type FoundReport = RunReport | { directory: string; problem: string };

/** One report directory's report.json, or why it cannot be rated. */
export function readRunReport(directory: string): FoundReport {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(join(directory, 'report.json'), 'utf8'));
  } catch (error) {
    return { directory, problem: `report.json cannot be read (${(error as Error).message})` };
  }
  if (typeof value === 'object' && value !== null && !('run' in value)) {
    return {
      directory,
      problem: `written before reports named their run: re-render it with promptpipe eval-report --out ${directory}`,
    };
  }
  const parsed = reportSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      directory,
      problem: `report.json is not a promptpipe eval report (${issue?.path.join('.')}: ${issue?.message})`,
    };
  }
  return { directory, ...(parsed.data as Omit<RunReport, 'directory'>) };
}

/** The reports under `reportsDir`, newest run first (problems last); none when the directory does not exist. */
export function listRunReports(reportsDir: string): FoundReport[] {
  if (!existsSync(reportsDir)) return [];
  const directories = [reportsDir];
  try {
    for (const entry of readdirSync(reportsDir, { withFileTypes: true })) {
      if (entry.isDirectory()) directories.push(join(reportsDir, entry.name));
    }
  } catch {
    return [{ directory: reportsDir, problem: 'the reports directory cannot be read' }];
  }
  const found = directories.filter((directory) => existsSync(join(directory, 'report.json'))).map(readRunReport);
  const startOf = (report: FoundReport) => ('run' in report ? report.run.startedAt : '');
  return found.sort((a, b) => startOf(b).localeCompare(startOf(a)));
}

/** The run `runId` under `reportsDir`, if there is one. */
export function findRunReport(reportsDir: string, runId: string): RunReport | undefined {
  return listRunReports(reportsDir).find((report): report is RunReport => 'run' in report && report.run.id === runId);
}
