/**
 * Human ratings of a `promptpipe eval` run through the dashboard: a real run (scripted personas, coach and judge: the
 * judge gives 4 to configuration A and 3 to B) is found in EVAL_REPORTS_DIR; a coordinator rates its conversations
 * with the run's rubric; the ratings are stored under the run's id, exported with the eval_* columns, and the
 * judge–human agreement computed from them (on the run page, and by `promptpipe eval-report` from the export file or
 * the study database) is the one worked out by hand below. Bad input is refused and stores nothing.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/cli.ts';
import { runEvalReportCommand } from '../../src/cli/eval-report-command.ts';
import type { Application } from '../../src/main.ts';
import { exportToDirectory } from '../../src/research/export/export-to-directory.ts';
import type { Store } from '../../src/store/store.ts';
import { evalResponder, evalWorkspace, runWorkspaceEval } from '../evaluation/eval-fixture.ts';
import { type StaffMember, staffPerRole, startStaffApp } from '../staff/staff-harness.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';

const workspace = evalWorkspace();
const reportsDir = join(workspace.root, 'reports');
const out = join(reportsDir, 'prompt-change');
let model: ScriptedOpenAiServer;
let runId: string;
let app: Application;
let staff: Record<'admin' | 'coordinator' | 'researcher' | 'viewer', StaffMember>;

interface ReportJson {
  run: { id: string };
  conversations: { conversation: string; scores: Record<string, { score: number }>; lines: { from: string }[] }[];
  summary: { agreement: { criterion: string; kappa: number; observedAgreement: number; items: number }[] };
}
const readReport = (): ReportJson => JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));

function quietIo(): CliIo & { exitCode?: number } {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  const io: CliIo & { exitCode?: number } = {
    stdin: process.stdin,
    stdout: sink,
    stderr: sink,
    onSignal: () => {},
    exit: (code) => {
      io.exitCode = code;
    },
  };
  return io;
}

beforeAll(async () => {
  model = await startScriptedOpenAiServer({ respond: evalResponder([]) });
  runId = await runWorkspaceEval(workspace, model, out, { comparePromptsDir: workspace.prompts('variant') });
}, 60_000);
afterAll(async () => {
  await model.close();
  rmSync(workspace.root, { recursive: true, force: true });
});

beforeEach(async () => {
  app = await startStaffApp({ environment: { EVAL_REPORTS_DIR: reportsDir } });
  staff = await staffPerRole(app);
});
afterEach(() => app.stop());

const conversationUrl = (key: string) => `/dashboard/evaluations/${runId}/${key}`;

function get(member: StaffMember, url: string) {
  return app.server.inject({ method: 'GET', url, headers: { cookie: member.cookie } });
}

function rate(member: StaffMember, key: string, form: Record<string, string>) {
  return app.server.inject({
    method: 'POST',
    url: `${conversationUrl(key)}/ratings`,
    headers: { cookie: member.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: member.csrf, ...form }).toString(),
  });
}

/** The first coach line's number (1-based) of a conversation in the report. */
function firstCoachLine(key: string): number {
  const conversation = readReport().conversations.find((candidate) => candidate.conversation === key);
  return (conversation?.lines.findIndex((line) => line.from === 'coach') ?? -1) + 1;
}

/**
 * The known example, on empathy (judge: A 4, B 3): A/ada 4, A/lucia 4, B/ada 3, B/lucia 2 corrected to 4 (the rater's
 * latest counts), and a coach-turn score of B/lucia (turns never count: the judge scores whole conversations).
 * Pairs (judge, human): (4,4) (4,4) (3,3) (3,4). Quadratic weights on 1..5: a difference of 1 weighs 1/16.
 * Observed weighted disagreement = (1/16)/4 = 1/64. Marginals: judge 4:2, 3:2; human 4:3, 3:1; expected =
 * (1/16)·(2·1 + 2·3)/16 = 1/32. Kappa = 1 − (1/64)/(1/32) = 0.5; exact agreement 3/4.
 */
async function rateTheKnownExample(member: StaffMember): Promise<void> {
  for (const [key, form] of [
    ['A/ada.1', { score_empathy: '4', comment: 'warm' }],
    ['A/lucia.1', { score_empathy: '4' }],
    ['B/ada.1', { score_empathy: '3' }],
    ['B/lucia.1', { score_empathy: '2' }],
    ['B/lucia.1', { score_empathy: '4', comment: 'on second reading' }],
    ['B/lucia.1', { turn: String(firstCoachLine('B/lucia.1')), score_empathy: '1' }],
  ] as const) {
    const saved = await rate(member, key, form);
    expect(saved.statusCode, saved.body).toBe(303);
    expect(saved.headers.location).toContain(`${conversationUrl(key)}?done=`);
  }
}

describe('rating an evaluation run in the dashboard', () => {
  it('lists the run, shows a conversation blind to the judge, stores ratings under the run and shows the agreement', async () => {
    const report = readReport();
    expect(report.conversations.find((c) => c.conversation === 'A/ada.1')?.scores.empathy?.score).toBe(4);
    expect(report.conversations.find((c) => c.conversation === 'B/lucia.1')?.scores.empathy?.score).toBe(3);

    const list = await get(staff.viewer, '/dashboard/evaluations');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`href="/dashboard/evaluations/${runId}"`);
    const run = await get(staff.viewer, `/dashboard/evaluations/${runId}`);
    expect(run.body).toContain(`href="${conversationUrl('B/lucia.1')}"`);
    expect(run.body).toContain('No whole-conversation ratings of this run');

    const page = await get(staff.coordinator, conversationUrl('A/ada.1'));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Empathy');
    expect(page.body).toContain('name="score_personalisation"');
    expect(page.body).toContain('coach line 1:');
    expect(page.body).not.toContain('scripted 4');

    await rateTheKnownExample(staff.coordinator);

    const stored = await app.store.ratings.list({ conversation: `eval:${runId}:B/lucia.1` });
    expect(stored.map(({ criterion, score, transcriptEntryId }) => ({ criterion, score, transcriptEntryId }))).toEqual([
      { criterion: 'empathy', score: 2, transcriptEntryId: undefined },
      { criterion: 'empathy', score: 4, transcriptEntryId: undefined },
      { criterion: 'empathy', score: 1, transcriptEntryId: firstCoachLine('B/lucia.1') },
    ]);
    expect(stored.every((rating) => rating.participantId === undefined && rating.rubric === 'test rubric')).toBe(true);
    expect(stored[0]?.rater).toBe(staff.coordinator.email);

    const after = await get(staff.viewer, `/dashboard/evaluations/${runId}`);
    expect(after.body).toContain('<td>empathy</td><td>0.500</td><td>75%</td><td>4</td>');
    const rated = await get(staff.viewer, conversationUrl('B/lucia.1'));
    expect(rated.body).toContain('Rating needs the write permission');
    expect(rated.body).toContain(`<td>line ${firstCoachLine('B/lucia.1')}</td><td>empathy</td><td>1</td>`);
  });

  it('exports the ratings with the run, and eval-report computes the same agreement from the file or the database', async () => {
    await rateTheKnownExample(staff.coordinator);
    const exported = join(workspace.root, 'export');
    await exportToDirectory({
      directory: exported,
      format: 'csv',
      context: {
        store: app.store,
        filter: { participantIds: [], since: undefined },
        pseudonymizer: undefined,
        defaultChannel: 'webhook',
      },
      version: 'test',
      exportedAt: new Date('2026-03-06T00:00:00Z'),
    });
    const rows = parse(readFileSync(join(exported, 'ratings.csv')), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(6);
    expect(rows.find((row) => row.eval_line !== '')).toMatchObject({
      conversation: `eval:${runId}:B/lucia.1`,
      eval_run_id: runId,
      eval_configuration: 'B',
      eval_persona: 'lucia',
      eval_repeat: '1',
      eval_line: String(firstCoachLine('B/lucia.1')),
      transcript_entry_id: '',
      score: '1',
    });
    expect(readFileSync(join(exported, 'codebook.md'), 'utf8')).toContain('| eval_run_id | string |');

    const expected = { criterion: 'empathy', kappa: 0.5, observedAgreement: 0.75, items: 4 };
    await runEvalReportCommand({ out, ratings: join(exported, 'ratings.csv') }, quietIo(), async () => {
      throw new Error('the file alone is asked for');
    });
    expect(readReport().run.id).toBe(runId);
    expect(readReport().summary.agreement).toEqual([expected]);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<td>empathy</td><td>0.500</td><td>75%</td>');

    // The database, through a store the command may close without closing the application's.
    const store = new Proxy(app.store, {
      get: (target, property) => (property === 'close' ? async () => {} : Reflect.get(target, property, target)),
    }) as Store;
    rmSync(join(out, 'report.json'));
    await runEvalReportCommand({ out, studyRatings: true }, quietIo(), async () => store);
    expect(readReport().summary.agreement).toEqual([expected]);
  });

  it('refuses a viewer, a score off the scale, a participant line as a coach turn and unknown runs; nothing stored', async () => {
    expect((await rate(staff.viewer, 'A/ada.1', { score_empathy: '4' })).statusCode).toBe(403);
    const offScale = await rate(staff.coordinator, 'A/ada.1', { score_empathy: '6' });
    expect(offScale.statusCode).toBe(400);
    expect(offScale.body).toContain('the score must be a whole number from 1 to 5');
    const personaLine = readReport()
      .conversations.find((c) => c.conversation === 'A/ada.1')
      ?.lines.findIndex((line) => line.from === 'persona');
    const notCoach = await rate(staff.coordinator, 'A/ada.1', {
      turn: String((personaLine ?? 0) + 1),
      score_empathy: '3',
    });
    expect(notCoach.statusCode).toBe(400);
    expect((await rate(staff.coordinator, 'A/nobody.1', { score_empathy: '3' })).statusCode).toBe(404);
    expect((await get(staff.coordinator, '/dashboard/evaluations/no-such-run')).statusCode).toBe(404);
    expect((await rate(staff.coordinator, 'A/ada.1', {})).statusCode).toBe(400);
    expect(await app.store.ratings.list()).toEqual([]);
  });
});
