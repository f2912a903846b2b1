/**
 * The HTML report as a person sees it: opened in Chromium from the file `promptpipe eval` wrote, it shows each
 * conversation's transcripts of A and B side by side, the judge's scores, the failed rules and the score chart.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/cli.ts';
import { runEvalCommand } from '../../src/cli/eval-command.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { COACH } from '../support/study-coach-script.ts';
import { browserAvailability, launchChromium } from '../web/browser.ts';
import { evalResponder, evalWorkspace, VARIANT_GREETING } from './eval-fixture.ts';

const availability = browserAvailability();
const workspace = evalWorkspace();
const out = join(workspace.root, 'report');
let model: ScriptedOpenAiServer;
let browser: Browser;
let exitCode: number | undefined;

beforeAll(async () => {
  model = await startScriptedOpenAiServer({ respond: evalResponder([]) });
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  const io: CliIo = {
    stdin: process.stdin,
    stdout: sink,
    stderr: sink,
    onSignal: () => {},
    exit: (code) => (exitCode = code),
  };
  await runEvalCommand(
    {
      personas: workspace.personas,
      rubric: workspace.rubric,
      days: 3,
      repeat: 1,
      concurrency: 3,
      out,
      promptsDir: workspace.prompts('good'),
      comparePromptsDir: workspace.prompts('broken'),
      intakeTurnLimit: 6,
    },
    io,
    { OPENAI_BASE_URL: model.baseUrl, EVAL_JUDGE_BASE_URL: model.baseUrl },
  );
  if (availability.run) browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await model.close();
  rmSync(workspace.root, { recursive: true, force: true });
});

describe.skipIf(!availability.run)('the evaluation report in Chromium', () => {
  it('shows the transcripts side by side with the scores, the failed rules and the chart', async () => {
    expect(exitCode).toBe(1);
    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    await page.goto(pathToFileURL(join(out, 'report.html')).href);
    await expect.poll(() => page.title()).toBe('PromptPipe evaluation');
    const ada = page.locator('section[id="ada.1"]');
    const sides = ada.locator('.side');
    expect(await sides.count()).toBe(2);
    // A's transcript: the greeting, ada's answers and a daily prompt; B (broken prompts) never got past the intake.
    await expect.poll(() => sides.nth(0).innerText()).toContain(COACH.greeting);
    expect(await sides.nth(0).innerText()).toContain(COACH.dailyPrompt);
    expect(await sides.nth(1).innerText()).not.toContain(COACH.dailyPrompt);
    expect(await sides.nth(1).locator('tr.cell-fail').first().innerText()).toContain('intake-completes');
    // Side by side: B's column starts to the right of A's, at the same height.
    const [left, right] = [await sides.nth(0).boundingBox(), await sides.nth(1).boundingBox()];
    expect(right && left && right.x > left.x + left.width - 1 && Math.abs(right.y - left.y) < 1).toBe(true);
    expect(await sides.nth(0).locator('table').nth(1).innerText()).toMatch(/empathy\s+4\s+scripted 4/);
    expect(await page.locator('body').innerText()).toContain('intake-completes in B/ada.1');
    expect(await page.locator('svg[aria-label="mean score per criterion"] rect').count()).toBe(6);
    expect(await page.locator('body').innerText()).not.toContain(VARIANT_GREETING);
    await page.screenshot({ path: process.env.EVAL_REPORT_SCREENSHOT ?? join(workspace.root, 'report.png') });
    await page.close();
  });
});
