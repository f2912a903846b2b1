/**
 * A coordinator rates an evaluation run in Chromium: signs in, opens Evaluations from the navigation, the run, one
 * conversation; reads its transcript, picks scores on the run's rubric, saves; sees the rating listed and, on the
 * run's page, the judge–human agreement it makes (the judge gave 4, the coordinator 4: one pair in full agreement).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { evalResponder, evalWorkspace, runWorkspaceEval } from '../evaluation/eval-fixture.ts';
import { PASSWORD, staffPerRole, startStaffApp } from '../staff/staff-harness.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { browserAvailability, launchChromium } from './browser.ts';

const WAIT = { timeout: 30_000 };
const availability = browserAvailability();

describe.skipIf(!availability.run)('rating an evaluation run in Chromium', () => {
  const workspace = evalWorkspace();
  const reportsDir = join(workspace.root, 'reports');
  let model: ScriptedOpenAiServer;
  let app: Application;
  let browser: Browser;
  let baseUrl = '';
  let runId = '';

  beforeAll(async () => {
    model = await startScriptedOpenAiServer({ respond: evalResponder([]) });
    runId = await runWorkspaceEval(workspace, model, join(reportsDir, 'baseline'));
    app = await startStaffApp({ environment: { EVAL_REPORTS_DIR: reportsDir }, listen: true });
    await staffPerRole(app);
    const address = app.server.addresses()[0];
    if (!address || typeof address === 'string') throw new Error('the server is not listening on a TCP port');
    baseUrl = `http://127.0.0.1:${address.port}`;
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await model?.close();
    rmSync(workspace.root, { recursive: true, force: true });
  }, 60_000);

  it('rates a conversation with the run’s rubric and shows the rating and the agreement', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
    await page.goto(`${baseUrl}/dashboard`);
    await page.getByLabel('E-mail').fill('coordinator@study.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Participants' }).waitFor(WAIT);

    await page.getByRole('navigation').getByRole('link', { name: 'Evaluations' }).click();
    await page.getByRole('link', { name: runId }).click();
    await page.getByRole('heading', { name: `Evaluation run ${runId}` }).waitFor(WAIT);
    await page.getByRole('link', { name: 'A/ada.1' }).click();
    await page.getByRole('heading', { name: 'Rate A/ada.1' }).waitFor(WAIT);
    expect(await page.locator('.rating-transcript li').count()).toBeGreaterThan(2);

    await page.getByLabel('Empathy 4', { exact: true }).check();
    await page.getByLabel('Clarity 5', { exact: true }).check();
    await page.getByLabel('Comment').fill('kind, a little long');
    await page.getByRole('button', { name: 'Save ratings' }).click();
    await page.getByText('Saved 2 rating(s)').waitFor(WAIT);
    const ratings = await page.locator('table.ratings').innerText();
    expect(ratings).toContain('coordinator@study.example');
    expect(ratings).toMatch(/empathy\s+4\s+kind, a little long/);

    await page.getByRole('link', { name: `Back to run ${runId}` }).click();
    const agreement = await page.locator('#agreement').innerText();
    expect(agreement).toMatch(/empathy\s+1\.000\s+100%\s+1/);
    // Clarity: the judge gave 4, the coordinator 5, one pair: no agreement beyond chance (kappa 0).
    expect(agreement).toMatch(/clarity\s+0\.000\s+0%\s+1/);
    expect(await page.locator('#run-conversations').innerText()).toMatch(/A\/ada\.1.*\s2 \/ 0/);
  });
});
