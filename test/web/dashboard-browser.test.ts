/**
 * The dashboard and the web chat in a real browser (Chromium via playwright-core), against the wired application
 * (in process, listening on an ephemeral port) with the webchat channel, the manual clock, an API token and a scripted
 * OpenAI-compatible model. One study, step by step; each step asserts what the pages show.
 * Screenshots of the main pages are written to a temporary directory, or to PROMPTPIPE_SCREENSHOT_DIR when set:
 * `npm run screenshots` sets it to docs/screenshots/ to refresh the README's pictures (a test run changes no tracked
 * file).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { COACH, createStudyCoach, SAID } from '../support/study-coach-script.ts';
import { startTestApplication } from '../support/test-application.ts';
import { browserAvailability, launchChromium } from './browser.ts';

const API_TOKEN = 'dashboard-test-token';
const SCREENSHOTS = `${resolve(process.env.PROMPTPIPE_SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'promptpipe-shots-')))}/`;
const WAIT = { timeout: 30_000 };
/** A step waits for several model turns and deliveries; generous because CI runs on 2 shared cores. */
const STEP_TIMEOUT = 120_000;
const availability = browserAvailability();

describe.skipIf(!availability.run)('dashboard and web chat in Chromium', () => {
  const unexpected: string[] = [];
  let model: ScriptedOpenAiServer;
  let app: Application;
  let baseUrl: string;
  let browser: Browser;
  let staff: BrowserContext;
  let dashboard: Page;
  let chat: Page;
  let participantUrl: string;

  const shoot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
  const transcript = () => dashboard.locator('#transcript');
  const chatList = () => chat.locator('#chat');

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    model = await startScriptedOpenAiServer({ respond: createStudyCoach(unexpected) });
    app = await startTestApplication(
      {
        PROMPTPIPE_API_TOKEN: API_TOKEN,
        PROMPTPIPE_CHANNEL: 'webchat',
        OPENAI_BASE_URL: model.baseUrl,
        OPENAI_API_KEY: 'test',
      },
      { start: false },
    );
    await app.start({ listen: true });
    const address = app.server.addresses()[0];
    if (!address || typeof address === 'string') throw new Error('the server is not listening on a TCP port');
    baseUrl = `http://127.0.0.1:${address.port}`;
    browser = await launchChromium();
    staff = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    dashboard = await staff.newPage();
    // The participant's browser shares nothing with the staff's (no cookie).
    chat = await (await browser.newContext({ viewport: { width: 420, height: 800 } })).newPage();
    // The pages' Content-Security-Policy must not block anything they do (a blocked script or style shows here).
    for (const page of [dashboard, chat]) {
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) unexpected.push(`CSP: ${message.text()}`);
      });
      page.on('pageerror', (error) => unexpected.push(`page error: ${error.message}`));
    }
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await model?.close();
  }, STEP_TIMEOUT);

  it(
    'refuses a wrong token and signs in with the API token',
    async () => {
      await dashboard.goto(`${baseUrl}/dashboard`);
      await expect.poll(() => dashboard.url()).toContain('/dashboard/login');
      await dashboard.getByLabel('API token').fill('not-the-token');
      await dashboard.getByRole('button', { name: 'Sign in' }).click();
      await dashboard.getByRole('alert').getByText('Wrong token').waitFor(WAIT);
      await shoot(dashboard, 'sign-in');

      await dashboard.getByLabel('API token').fill(API_TOKEN);
      await dashboard.getByRole('button', { name: 'Sign in' }).click();
      await dashboard.getByRole('heading', { name: 'Participants' }).waitFor(WAIT);
      const cookies = await staff.cookies();
      expect(cookies.find((cookie) => cookie.name === 'promptpipe_session')).toMatchObject({
        httpOnly: true,
        sameSite: 'Strict',
      });
    },
    STEP_TIMEOUT,
  );

  it(
    'enrolls a participant through the form and shows the greeting and the web-chat link',
    async () => {
      await dashboard.getByRole('link', { name: 'Enroll', exact: true }).click();
      await dashboard.getByLabel('Phone number').fill('+1 (555) 123-0002');
      await dashboard.getByLabel('Name').fill('Ada');
      await dashboard.getByLabel('Time zone (IANA)').fill('America/Toronto');
      await dashboard.getByRole('button', { name: 'Enroll', exact: true }).click();
      await dashboard.getByRole('heading', { name: 'Ada' }).waitFor(WAIT);
      participantUrl = dashboard.url();
      await transcript().getByText(COACH.greeting).waitFor(WAIT);
      await expect.poll(() => dashboard.locator('#chat-link').textContent()).toMatch(/^\/chat\/[A-Za-z0-9_-]{43}$/);
    },
    STEP_TIMEOUT,
  );

  it(
    'chats through intake in the web chat, live in both pages',
    async () => {
      const link = await dashboard.locator('#chat-link').getAttribute('href');
      await chat.goto(`${baseUrl}${link}`);
      await chatList().getByText(COACH.greeting).waitFor(WAIT);
      // Nothing of the dashboard (or any other participant) is on the participant's page.
      expect(await chat.content()).not.toContain('+15551230002');

      await chat.getByLabel('Your message').fill(SAID.habit);
      await chat.getByRole('button', { name: 'Send' }).click();
      await chatList().getByText(COACH.askTiming).waitFor(WAIT);
      await transcript().getByText(SAID.habit).waitFor(WAIT);
      await transcript().getByText(COACH.askTiming).waitFor(WAIT);

      await chat.getByLabel('Your message').fill(SAID.timing);
      await chat.getByLabel('Your message').press('Enter');
      await chatList().getByText(COACH.allSet).waitFor(WAIT);
      await transcript().getByText(COACH.allSet).waitFor(WAIT);
      // Tool calls are folded on the dashboard, never shown to the participant.
      await transcript().locator('details summary', { hasText: 'scheduler' }).first().waitFor(WAIT);
      expect(await chatList().locator('details').count()).toBe(0);
      await dashboard.reload();
      await expect.poll(() => dashboard.locator('#sub-state').textContent()).toBe('FEEDBACK');
      // The delivery receipt of each outbound message: the greeting was handed to the web chat.
      await expect
        .poll(() => transcript().locator('.entry', { hasText: COACH.greeting }).locator('.delivery').textContent())
        .toBe('sent');
      await shoot(dashboard, 'participant');
    },
    STEP_TIMEOUT,
  );

  it(
    'advances the manual clock a day: the daily prompt and its poll arrive in the chat; Done counts a success',
    async () => {
      await dashboard.getByRole('button', { name: '+1 day' }).click();
      await dashboard.locator('#study-time').getByText('2026-03-03 14:00 UTC').waitFor(WAIT);
      await chatList().getByText(COACH.dailyPrompt).waitFor(WAIT);
      const done = chatList().getByRole('button', { name: 'Done' }).last();
      await done.waitFor(WAIT);
      await shoot(chat, 'web-chat');
      await done.click();
      await chatList().getByText(COACH.feedback).waitFor(WAIT);

      await expect
        .poll(async () => {
          await dashboard.goto(participantUrl);
          return dashboard.locator('#success-count').textContent();
        }, WAIT)
        .toBe('1');
      await dashboard.goto(`${baseUrl}/dashboard`);
      const row = dashboard.getByRole('row', { name: /Ada/ });
      await expect.poll(() => row.locator('.success-count').textContent()).toBe('1');
      await shoot(dashboard, 'participants');
      await dashboard.getByRole('link', { name: 'Overview' }).click();
      await dashboard.getByRole('img', { name: 'Participants by status' }).waitFor(WAIT);
      await shoot(dashboard, 'overview');
    },
    STEP_TIMEOUT,
  );

  it(
    'sends an organiser message and moves the participant to INTAKE',
    async () => {
      await dashboard.goto(participantUrl);
      await dashboard.getByLabel('Message to the participant').fill('Hello from the study team');
      await dashboard.getByRole('button', { name: 'Send message' }).click();
      await dashboard.getByRole('status').getByText('Message sent').waitFor(WAIT);
      await transcript().getByText('Hello from the study team').waitFor(WAIT);
      await chatList().getByText('Hello from the study team').waitFor(WAIT);

      await dashboard.getByRole('button', { name: 'Move to INTAKE' }).click();
      await dashboard.getByRole('status').getByText('Moved to INTAKE').waitFor(WAIT);
      expect(await dashboard.locator('#sub-state').textContent()).toBe('INTAKE');
    },
    STEP_TIMEOUT,
  );

  it(
    'deletes the participant after a confirmation that says what is lost; the chat link stops working',
    async () => {
      const link = await dashboard.locator('#chat-link').getAttribute('href');
      await dashboard.getByRole('link', { name: 'Delete…' }).click();
      const warning = dashboard.locator('#delete-warning');
      await warning.waitFor(WAIT);
      expect(await warning.textContent()).toMatch(/conversation state, profile, schedules/);
      await dashboard.getByRole('button', { name: 'Yes, delete' }).click();
      await dashboard.getByRole('heading', { name: 'Participants' }).waitFor(WAIT);
      expect(await dashboard.getByRole('row', { name: /Ada/ }).count()).toBe(0);
      // The chat page still open in the participant's browser: its stream was ended, so it says the chat closed.
      await chat.locator('#chat-closed').waitFor(WAIT);
      expect(await chat.getByLabel('Your message').isDisabled()).toBe(true);
      const response = await chat.goto(`${baseUrl}${link}`);
      expect(response?.status()).toBe(404);
      expect(unexpected).toEqual([]);
    },
    STEP_TIMEOUT,
  );

  it('refuses a state-changing request without the CSRF token', async () => {
    const response = await dashboard.request.post(`${baseUrl}/dashboard/enroll`, {
      form: { phone_number: '+15551230009' },
    });
    expect(response.status()).toBe(403);
    expect(await response.text()).toContain('refused');
  });
});
