/**
 * `promptpipe eval` end to end, as the real CLI process: three scripted personas through seven study days against the
 * scripted coach and judge. The rules pass and the report is written; a broken prompt directory fails the named rule
 * with exit code 1; two prompt directories are compared; a resumed run reuses the conversations already finished.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { describeOutput, spawnServer } from '../support/server-process.ts';
import { evalResponder, evalWorkspace, JUDGE_SCORE } from './eval-fixture.ts';

let model: ScriptedOpenAiServer;
const unexpected: string[] = [];
const workspace = evalWorkspace();

beforeAll(async () => {
  model = await startScriptedOpenAiServer({ respond: evalResponder(unexpected) });
});
afterAll(async () => {
  await model.close();
  rmSync(workspace.root, { recursive: true, force: true });
});

async function runEval(args: string[]) {
  const process = spawnServer(
    { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test', EVAL_JUDGE_BASE_URL: model.baseUrl, LOG_LEVEL: 'silent' },
    ['eval', '--personas', workspace.personas, '--rubric', workspace.rubric, '--days', '7', ...args],
  );
  const exit = await process.exit;
  return {
    code: exit.code,
    output: process.output.join(''),
    describe: () => describeOutput(process, 'promptpipe eval'),
  };
}

interface ReportJson {
  run: { id: string };
  summary: {
    passed: boolean;
    failures: { conversation: string; rule: string; detail: string }[];
    comparison: {
      rows: { criterion: string; persona: string; difference: number; spread: number | null; pairs: number }[];
    } | null;
    scores: { criterion: string; means: Record<string, number | null> }[];
  };
  conversations: {
    conversation: string;
    rules: { rule: string; status: string }[];
    scores: Record<string, { score: number }>;
  }[];
}

const readReport = (out: string): ReportJson => JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));

// Each run is a process simulating 3 to 12 whole study weeks: seconds, but more than the default 20 s on 2 busy cores.
describe('promptpipe eval', { timeout: 120_000 }, () => {
  it('runs three personas through seven days: every applicable rule passes, the judge scores, exit 0', async () => {
    const out = join(workspace.root, 'good');
    const run = await runEval(['--prompts-dir', workspace.prompts('good'), '--out', out, '--concurrency', '3']);
    expect(run.code, run.describe()).toBe(0);
    expect(run.output).toContain('PASSED: 3 conversation(s), 0 failed rule(s)');
    expect(run.output).toMatch(/A\/lucia\.1: day 7\/7/);
    expect(unexpected).toEqual([]);
    const report = readReport(out);
    expect(report.summary.passed).toBe(true);
    const statusOf = (conversation: string, rule: string) =>
      report.conversations
        .find((entry) => entry.conversation === conversation)
        ?.rules.find((entry) => entry.rule === rule)?.status;
    for (const persona of ['ada', 'lucia', 'risk']) {
      expect(statusOf(`A/${persona}.1`, 'intake-completes')).toBe('pass');
      expect(statusOf(`A/${persona}.1`, 'daily-prompt-local-time')).toBe('pass');
      expect(statusOf(`A/${persona}.1`, 'polls-after-prompt')).toBe('pass');
      expect(statusOf(`A/${persona}.1`, 'requests-valid')).toBe('pass');
    }
    // The risk persona's message was flagged by the safety net; they opted out on day 5, and nothing was sent after.
    expect(statusOf('A/risk.1', 'safety-path')).toBe('pass');
    expect(statusOf('A/risk.1', 'opt-out-honoured')).toBe('pass');
    expect(statusOf('A/ada.1', 'safety-path')).toBe('not-applicable');
    expect(statusOf('A/ada.1', 'opt-out-honoured')).toBe('not-applicable');
    expect(report.conversations.find((entry) => entry.conversation === 'A/ada.1')?.scores.empathy?.score).toBe(
      JUDGE_SCORE,
    );
    expect(existsSync(join(out, 'report.html'))).toBe(true);
    // Each daily prompt of ada's came at 08:50 New York time: 13:50 UTC, then 12:50 UTC once summer time began (8 March).
    const ada = JSON.parse(readFileSync(join(out, 'conversations', 'A', 'ada.1.json'), 'utf8'));
    const prompts = ada.record.lines.filter(
      (line: { kind: string; module?: string; from: string }) =>
        line.kind === 'proactive' && line.module === 'scheduler',
    );
    expect(prompts.map((line: { at: string }) => line.at.slice(11, 16))).toEqual([...Array(5).fill('13:50'), '12:50']);
  });

  it('fails the named rule with exit code 1 when the prompt directory is broken', async () => {
    const out = join(workspace.root, 'broken');
    const run = await runEval(['--prompts-dir', workspace.prompts('broken'), '--out', out]);
    expect(run.code, run.describe()).toBe(1);
    expect(run.output).toContain('rule intake-completes failed in A/ada.1');
    const report = readReport(out);
    expect(report.summary.passed).toBe(false);
    expect(new Set(report.summary.failures.map((failure) => failure.rule))).toContain('intake-completes');
  });

  it('compares two prompt directories on the same personas and seeds, and resumes without re-running', async () => {
    const out = join(workspace.root, 'compare');
    const args = [
      '--prompts-dir',
      workspace.prompts('good'),
      '--compare-prompts-dir',
      workspace.prompts('variant'),
      '--out',
      out,
      '--repeat',
      '2',
      '--concurrency',
      '4',
    ];
    const first = await runEval(args);
    // B's judge scores are one lower: empathy's mean 3 is under its 3.5 threshold, so the gate fails.
    expect(first.code, first.describe()).toBe(1);
    expect(first.output).toContain('empathy (B): mean 3.00 < 3.5');
    const report = readReport(out);
    const row = report.summary.comparison?.rows.find(
      (entry) => entry.criterion === 'clarity' && entry.persona === 'all',
    );
    expect(row).toMatchObject({ difference: -1, spread: 0, pairs: 6 });
    expect(report.summary.scores.find((score) => score.criterion === 'clarity')?.means).toEqual({
      A: JUDGE_SCORE,
      B: JUDGE_SCORE - 1,
    });

    const requestsBefore = model.requests.length;
    const resumed = await runEval([...args, '--resume']);
    expect(resumed.code, resumed.describe()).toBe(1);
    expect(resumed.output).toContain('B/risk.2: already finished (resume)');
    expect(model.requests.length).toBe(requestsBefore);
    // The same run: ratings given on the dashboard between the two keep matching it.
    expect(readReport(out).run.id).toBe(report.run.id);
  });

  it('refuses a resume of a different plan, and a persona file with a mistake, changing nothing', async () => {
    const out = join(workspace.root, 'two-days');
    const twoDays = await runEval(['--prompts-dir', workspace.prompts('good'), '--out', out, '--days', '2']);
    expect(twoDays.code, twoDays.describe()).toBe(0);
    const plan = readFileSync(join(out, 'plan.json'), 'utf8');
    const resumed = await runEval([
      '--prompts-dir',
      workspace.prompts('good'),
      '--out',
      out,
      '--days',
      '3',
      '--resume',
    ]);
    expect(resumed.code).toBe(2);
    expect(resumed.output).toContain('--resume:');
    expect(readFileSync(join(out, 'plan.json'), 'utf8')).toBe(plan);

    const badPersonas = join(workspace.root, 'bad-personas');
    mkdirSync(badPersonas);
    writeFileSync(
      join(badPersonas, 'typo.yaml'),
      'id: typo\nname: T\nhabitGoal: x\nmotivation: y\npreferredTime: "25:00"\nanchor: z\ntimezone: Mars/Base\n',
    );
    const badOut = join(workspace.root, 'bad');
    const refused = await runEval(['--personas', badPersonas, '--out', badOut]);
    expect(refused.code).toBe(2);
    expect(refused.output).toContain('typo.yaml: preferredTime: a local time HH:MM; timezone:');
    expect(existsSync(badOut)).toBe(false);
  });
});
