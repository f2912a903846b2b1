/**
 * The study team's first day, in Chromium at 1366×768 against the real `promptpipe serve` (manual clock at Mon 2 Mar
 * 2026 14:00 UTC, the web-chat channel, an API token and a scripted model): the header keeps "Sign out" on its line,
 * no page logs a console error (the favicon included), the participant page reads as fields and sentences in the
 * participant's zone, the export page downloads with the session, and the web chat shows the participant's times.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';
import { COACH, createStudyCoach, SAID } from '../support/study-coach-script.ts';
import { browserAvailability, launchChromium } from './browser.ts';

const API_TOKEN = 'dashboard-pages-browser-token';
const WAIT = { timeout: 30_000 };
const STEP_TIMEOUT = 120_000;
const availability = browserAvailability();

describe.skipIf(!availability.run)('dashboard pages at 1366 px, against the real server', () => {
  const unexpected: string[] = [];
  /** Console errors, page errors and failed responses of every page: each is a defect the team would see. */
  const problems: string[] = [];
  let stateDir = '';
  let model: ScriptedOpenAiServer;
  let server: ServerProcess;
  let browser: Browser;
  let staff: BrowserContext;
  let dashboard: Page;
  /** The participant's browser, in Tokyo: the chat must not show its times in the viewer's zone when the study knows the participant's. */
  let participantBrowser: BrowserContext;
  let ada = { id: '', chatPath: '' };

  const watch = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
    });
  };

  async function enroll(phone: string, timezone?: string): Promise<{ id: string; chatPath: string }> {
    const response = await fetch(`${server.baseUrl}/conversation/participants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: phone, name: 'Ada', channel: 'webchat', ...(timezone ? { timezone } : {}) }),
    });
    expect(response.status).toBe(201);
    const { result } = (await response.json()) as { result: { id: string; chat_url: string } };
    return { id: result.id, chatPath: new URL(result.chat_url, server.baseUrl).pathname };
  }

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-pages-browser-'));
    model = await startScriptedOpenAiServer({ respond: createStudyCoach(unexpected) });
    server = await startServer({
      PATH: process.env.PATH ?? '',
      PROMPTPIPE_STATE_DIR: stateDir,
      PROMPTPIPE_API_TOKEN: API_TOKEN,
      PROMPTPIPE_CHANNEL: 'webchat',
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00Z',
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'test',
      GENAI_MODEL: 'scripted',
      EXPORT_PSEUDONYM_KEY: 'browser-test-pseudonym-key',
      PROMPTPIPE_PUBLIC_URL: '',
      LOG_LEVEL: 'warn',
    });
    browser = await launchChromium();
    staff = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    dashboard = await staff.newPage();
    watch(dashboard);
    participantBrowser = await browser.newContext({ viewport: { width: 420, height: 800 }, timezoneId: 'Asia/Tokyo' });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await stopServer(server);
    await model?.close();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  }, STEP_TIMEOUT);

  it(
    'signs in; with the manual clock the header is one line and "Sign out" one line at its end',
    async () => {
      await dashboard.goto(`${server.baseUrl}/dashboard`);
      await dashboard.getByLabel('API token').fill(API_TOKEN);
      await dashboard.getByRole('button', { name: 'Sign in' }).click();
      await dashboard.getByRole('heading', { name: 'Participants' }).waitFor(WAIT);
      await dashboard.getByRole('button', { name: '+1 day' }).waitFor(WAIT);

      const signOut = dashboard.getByRole('button', { name: 'Sign out' });
      const header = await dashboard.locator('header.top').boundingBox();
      const nav = await dashboard.getByRole('navigation', { name: 'Dashboard' }).boundingBox();
      const button = await signOut.boundingBox();
      if (!header || !nav || !button) throw new Error('the header is not laid out');
      // One row: the button sits beside the navigation, at the right end, and the header is not two rows high.
      expect(button.y).toBeLessThan(nav.y + nav.height);
      expect(button.y + button.height).toBeGreaterThan(nav.y);
      expect(button.x + button.width).toBeGreaterThan(1366 - 40);
      expect(header.height).toBeLessThan(2 * button.height);
      // The distinct tops of the lines its text is laid out in (a string: the tests are type-checked without the DOM).
      const lines = await dashboard.evaluate(`(() => {
        const range = document.createRange();
        range.selectNodeContents(document.querySelector('header.top form.sign-out button'));
        return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
      })()`);
      expect(lines).toBe(1);
      const favicon = await dashboard.request.get(`${server.baseUrl}/favicon.ico`);
      expect(favicon.status()).toBe(200);
      expect(favicon.headers()['content-type']).toBe('image/x-icon');
    },
    STEP_TIMEOUT,
  );

  it(
    "shows the web chat in the participant's zone, or the browser's when the study has none",
    async () => {
      ada = await enroll('+15551230301', 'Europe/Berlin');
      const chat = await participantBrowser.newPage();
      watch(chat);
      await chat.goto(`${server.baseUrl}${ada.chatPath}`);
      await chat.locator('#chat').getByText(COACH.greeting).waitFor(WAIT);
      await chat.getByLabel('Your message').fill(SAID.habit);
      await chat.getByRole('button', { name: 'Send' }).click();
      await chat.locator('#chat').getByText(COACH.askTiming).waitFor(WAIT);
      await chat.getByLabel('Your message').fill(SAID.timing);
      await chat.getByRole('button', { name: 'Send' }).click();
      await chat.locator('#chat').getByText(COACH.allSet).waitFor(WAIT);
      // 14:00 UTC is 15:00 in Berlin (and 23:00 in the browser's Tokyo), for the first and the live messages.
      const times = await chat.locator('#chat time').allTextContents();
      expect(times.length).toBeGreaterThanOrEqual(5);
      expect(new Set(times)).toEqual(new Set(['Mon 2 Mar, 15:00']));

      const unzoned = await enroll('+15551230302');
      await chat.goto(`${server.baseUrl}${unzoned.chatPath}`);
      await chat.locator('#chat').getByText(COACH.greeting).waitFor(WAIT);
      await chat.getByLabel('Your message').fill(SAID.habit);
      await chat.getByRole('button', { name: 'Send' }).click();
      await chat.locator('#chat').getByText(COACH.askTiming).waitFor(WAIT);
      const browserZoneTimes = await chat.locator('#chat time').allTextContents();
      expect(browserZoneTimes).toHaveLength(3);
      expect(new Set(browserZoneTimes)).toEqual(new Set(['Mon 2 Mar, 23:00']));
      await chat.close();
    },
    STEP_TIMEOUT,
  );

  it(
    "shows the participant's profile, schedule and events as readable fields in their zone",
    async () => {
      await dashboard.goto(`${server.baseUrl}/dashboard/participants/${ada.id}`);
      await dashboard.getByRole('heading', { name: 'Profile and tone' }).waitFor(WAIT);
      const profile = dashboard.locator('#profile');
      const field = (label: string) =>
        profile.locator('dt', { hasText: label }).locator('xpath=following-sibling::dd[1]');
      expect(await field('Habit').textContent()).toBe('walking');
      expect(await field('Preferred time').textContent()).toBe('09:00');
      expect(await field('Anchor').textContent()).toBe('after breakfast');
      expect(await field('Intensity').textContent()).toBe('normal');
      expect(await field('Done / prompts').textContent()).toMatch(/^0 \/ \d+$/);
      // The stored JSON only behind its toggle, closed.
      const raw = profile.locator('details.raw');
      expect(await raw.locator('pre').isVisible()).toBe(false);
      await raw.getByText('raw data').click();
      expect(await raw.locator('pre').textContent()).toContain('"habit_domain": "walking"');

      expect(await dashboard.locator('#schedules li.schedule').textContent()).toBe(
        'daily at 09:00 Europe/Berlin (next: Tue 3 Mar, 08:50)',
      );
      const events = dashboard.locator('#events');
      expect(await events.locator('th').first().textContent()).toBe('Time (Europe/Berlin)');
      const eventTimes = await events.locator('tbody tr td:first-child').allTextContents();
      expect(eventTimes.length).toBeGreaterThan(3);
      expect(new Set(eventTimes)).toEqual(new Set(['Mon 2 Mar, 15:00']));
      await events
        .locator('tr', { hasText: 'participant-enrolled' })
        .getByText('timezone: Europe/Berlin')
        .waitFor(WAIT);
      expect(await dashboard.locator('#transcript time').first().textContent()).toBe('Mon 2 Mar, 15:00');
    },
    STEP_TIMEOUT,
  );

  it(
    'exports from the export page with the session: chosen table, participant, format and pseudonyms',
    async () => {
      await dashboard.getByRole('link', { name: 'Export', exact: true }).click();
      await dashboard.getByRole('heading', { name: 'Export' }).waitFor(WAIT);
      // Only the participants table: every other preselected table (study data, trial tables, ratings) unchecked.
      const tables = await dashboard
        .locator('input[name=table]')
        .evaluateAll((inputs) => inputs.map((input) => (input as unknown as { value: string }).value));
      for (const table of tables.filter((name) => name !== 'participants')) {
        await dashboard.locator(`input[name=table][value=${table}]`).uncheck();
      }
      await dashboard.getByLabel('JSON Lines').check();
      await dashboard.getByRole('listbox', { name: /^Participants/ }).selectOption(ada.id);
      await dashboard.getByLabel('Pseudonymise').check();
      await dashboard.getByRole('button', { name: 'Show download links' }).click();
      const downloads = dashboard.locator('#downloads');
      await downloads.waitFor(WAIT);
      expect(await downloads.getByRole('link').allTextContents()).toEqual(['participants.jsonl']);

      const [download] = await Promise.all([
        dashboard.waitForEvent('download'),
        downloads.getByRole('link', { name: 'participants.jsonl' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('participants.jsonl');
      const rows = (await readFile(await download.path(), 'utf8')).trim().split('\n');
      expect(rows).toHaveLength(1);
      const row = JSON.parse(rows[0] ?? '{}') as Record<string, unknown>;
      expect(row).toMatchObject({ participant_id: ada.id, phone_number: expect.stringMatching(/^pn_[0-9a-f]{16}$/) });

      const stats = await dashboard.request.get(`${server.baseUrl}/stats`);
      expect(stats.status()).toBe(200);
      expect(((await stats.json()) as { result: { participants: { total: number } } }).result.participants.total).toBe(
        2,
      );
    },
    STEP_TIMEOUT,
  );

  it('logged no console error, page error or failed request on any page', () => {
    expect(unexpected).toEqual([]);
    expect(problems).toEqual([]);
  });
});
