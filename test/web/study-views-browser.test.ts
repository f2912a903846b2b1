/**
 * The roster, the overview and the adherence grid in Chromium at 1366 px wide, against the real `promptpipe serve`
 * (SQLite, so the dashboard's reads go through their worker thread; manual clock at Mon 16 Mar 2026 14:00 UTC). The
 * study is written into the database before the server starts, through the store: two weeks of daily prompts, replies,
 * "Done" answers, a skipped day, a pause, and a day of 12345 LLM tokens. Each step asserts what the page shows: nothing
 * cut off or shrunk, every cell's state, sorting, and the links to each participant.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adherenceRuleText } from '../../src/safety/adherence-alerts.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';
import { browserAvailability, launchChromium } from './browser.ts';

const API_TOKEN = 'study-views-browser-token';
const WAIT = { timeout: 30_000 };
const DATES = Array.from({ length: 14 }, (_, index) => `2026-03-${String(index + 3).padStart(2, '0')}`);
const availability = browserAvailability();

/** What participant `index` did on day `day` (0 = 3 March): the grid must show exactly this. */
function outcome(index: number, day: number): 'done' | 'answered' | 'no-answer' {
  return (['done', 'answered', 'no-answer'] as const)[(index + day) % 3] ?? 'done';
}

const PEOPLE = [
  { name: 'Maximiliana Fernández-Oyarzábal', zone: 'America/Argentina/Buenos_Aires' },
  { name: 'Bea Skipped', zone: 'Europe/Madrid' },
  { name: 'Cy Paused', zone: 'UTC' },
  ...Array.from({ length: 9 }, (_, index) => ({ name: `Participant ${index + 4}`, zone: 'Asia/Tokyo' })),
];
const SKIPPED_DAY = 5; // 8 March, for Bea
const PAUSED_DAYS = [7, 8, 9]; // 10–12 March, for Cy

/** Bea's open adherence alert (the roster's filter and marker). */
const BEA_ALERT_RULE = adherenceRuleText.missedPrompts(2, new Date('2026-03-13T12:00:00Z'));

async function writeStudy(store: Store): Promise<void> {
  for (const [index, person] of PEOPLE.entries()) {
    const id = `p_${index + 1}`;
    await store.participants.create(
      participantFixture(id, `+1555010${String(index).padStart(4, '0')}`, new Date('2026-03-01T10:00:00Z'), {
        name: person.name,
        timezone: person.zone,
      }),
    );
    for (const [day, date] of DATES.entries()) {
      if ((index === 1 && day === SKIPPED_DAY) || (index === 2 && PAUSED_DAYS.includes(day))) continue;
      const sentAt = new Date(`${date}T12:00:00Z`);
      await store.events.record({
        participantId: id,
        type: 'prompt-sent',
        data: { local_date: date, prompt: 'Walk after breakfast' },
        createdAt: sentAt,
      });
      const result = outcome(index, day);
      if (result === 'no-answer') continue;
      const at = new Date(sentAt.getTime() + 25 * 60_000);
      const said = result === 'done' ? 'Done' : 'Next time, it rained all morning and the park was flooded';
      await store.transcript.append([
        { participantId: id, role: 'user', kind: 'message', content: said, createdAt: at },
      ]);
      if (result === 'done') {
        await store.events.record({
          participantId: id,
          type: 'poll-answered',
          data: { kind: 'success-counted', question: 'Did you do it?', option: 'Done' },
          createdAt: at,
        });
      }
    }
  }
  const status = (to: string, from: string, at: string) =>
    store.events.record({
      participantId: 'p_3',
      type: 'participant-updated',
      data: { fields: ['status'], status_from: from, status_to: to },
      createdAt: new Date(at),
    });
  await status('paused', 'active', '2026-03-10T08:00:00Z');
  await status('active', 'paused', '2026-03-13T08:00:00Z');
  // Each one's next daily prompt, shown in their zone: America/Argentina/Buenos_Aires is the widest cell of the roster.
  for (const index of PEOPLE.keys()) {
    await store.jobs.enqueue(
      {
        id: `daily_${index + 1}`,
        kind: 'daily_prompt',
        participantId: `p_${index + 1}`,
        runAt: new Date('2026-03-17T12:00:00Z'),
        payload: {},
      },
      new Date('2026-03-16T12:00:00Z'),
    );
  }
  const call = { purpose: 'feedback', model: 'm', providerHost: 'h', latencyMs: 900, outcome: 'success' };
  await store.llmCalls.record({ ...call, totalTokens: 12345, createdAt: new Date('2026-03-15T09:00:00Z') });
  await store.llmCalls.record({ ...call, totalTokens: 800, createdAt: new Date('2026-03-16T09:00:00Z') });
}

async function writeAdherenceAlert(store: Store): Promise<void> {
  await store.alerts.create(
    {
      id: 'alert_bea',
      participantId: 'p_2',
      kind: 'adherence',
      detector: 'adherence',
      rule: BEA_ALERT_RULE,
      score: undefined,
      urgency: 'normal',
      reason: '2 daily prompts in a row without an answer',
      sourceMessageId: undefined,
      createdAt: new Date('2026-03-15T12:00:00Z'),
    },
    ['dashboard'],
  );
}

describe.skipIf(!availability.run)('roster, overview and adherence grid at 1366 px, against the real server', () => {
  const problems: string[] = [];
  let stateDir = '';
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-study-views-'));
    const store = await createSqliteStore({ filename: join(stateDir, 'promptpipe.db') });
    await writeStudy(store);
    await writeAdherenceAlert(store);
    await store.close();
    server = await startServer({
      PATH: process.env.PATH ?? '',
      PROMPTPIPE_STATE_DIR: stateDir,
      PROMPTPIPE_API_TOKEN: API_TOKEN,
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: '2026-03-16T14:00:00Z',
      LOG_LEVEL: 'warn',
    });
    browser = await launchChromium();
    const staff = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    page = await staff.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
    });
    // Signed in over HTTP (the sign-in form is another test's subject), the session cookie handed to the browser.
    const signIn = await fetch(`${server.baseUrl}/dashboard/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${API_TOKEN}`,
      redirect: 'manual',
    });
    const [name = '', value = ''] = (String(signIn.headers.get('set-cookie')).split(';')[0] ?? '').split('=');
    await staff.addCookies([{ name, value, url: server.baseUrl }]);
    await page.goto(`${server.baseUrl}/dashboard`);
    await page.getByRole('heading', { name: 'Participants' }).waitFor(WAIT);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await stopServer(server);
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  }, 30_000);

  /**
   * The right edges of an element and of the table wrapper around it, the viewport's width, and whether the wrapper
   * hides part of its table behind a scroll bar. (Scripts run in the page as text: the tests are type-checked without
   * the DOM's types.)
   */
  const edges = (selector: string) =>
    page.evaluate(`(() => {
      const element = document.querySelector(${JSON.stringify(selector)});
      const wrap = element.closest('.table-wrap') ?? document.body;
      return {
        right: element.getBoundingClientRect().right,
        wrapRight: wrap.getBoundingClientRect().right,
        viewport: document.documentElement.clientWidth,
        hiddenByScrolling: wrap.scrollWidth > wrap.clientWidth,
      };
    })()`) as Promise<{ right: number; wrapRight: number; viewport: number; hiddenByScrolling: boolean }>;

  interface ChartMeasure {
    name: string;
    box: { left: number; right: number };
    /** On-screen width ÷ drawing width: 1 when the chart is not scaled. */
    scale: number;
    texts: { text: string; left: number; right: number; height: number }[];
  }

  it('shows the roster whole: the "Sent / answered / done" column inside the page at 1366 and 1920 px', async () => {
    for (const width of [1366, 1920]) {
      await page.setViewportSize({ width, height: 768 });
      await page.goto(`${server.baseUrl}/dashboard`);
      const column = await edges('#roster th.counts');
      expect(column.right).toBeLessThanOrEqual(column.viewport);
      expect(column.right).toBeLessThanOrEqual(column.wrapRight);
      expect(column.hiddenByScrolling).toBe(false);
    }
    await page.setViewportSize({ width: 1366, height: 768 });
    // Maximiliana: 14 prompts; Done on days 0, 3, 6, 9, 12; wrote back on 10 of them (never more than sent).
    const row = page.getByRole('row', { name: /Maximiliana/ });
    expect((await row.locator('td.counts').textContent())?.trim()).toBe('14 / 10 / 5');
    expect(await page.getByText('12 participant(s)').count()).toBe(1);
  });

  it('filters the roster on open adherence alerts from its form, keeps the filter in the URL, marks the row', async () => {
    await page.goto(`${server.baseUrl}/dashboard`);
    await page.getByLabel('Adherence alert').selectOption('missed-prompts');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/adherence_alert=missed-prompts/, WAIT);
    expect(await page.getByText('1 participant(s)').count()).toBe(1);
    const rows = page.locator('#roster tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Bea Skipped');
    const marker = rows.first().getByRole('link', { name: 'adherence alert' });
    expect(await marker.getAttribute('title')).toBe(`Adherence alert: ${BEA_ALERT_RULE}`);
    expect(await page.getByLabel('Adherence alert').inputValue()).toBe('missed-prompts');
    // Another rule: nobody; the marker leads to the alert in the inbox.
    await page.getByLabel('Adherence alert').selectOption('silent-days');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('0 participant(s)').waitFor(WAIT);
    await page.goto(`${server.baseUrl}/dashboard?adherence_alert=any`);
    await page.locator('#roster a.adherence-alert').click();
    await page.locator('li#alert_bea').waitFor(WAIT);
  });

  it('draws the overview charts at their size, every label and value inside them, 12345 whole', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('img', { name: 'LLM tokens per day (UTC)' }).waitFor(WAIT);
    const charts = (await page.evaluate(`[...document.querySelectorAll('figure.chart svg')].map((svg) => {
      const box = svg.getBoundingClientRect();
      const texts = [...svg.querySelectorAll('text')].map((text) => {
        const rect = text.getBoundingClientRect();
        return { text: text.textContent ?? '', left: rect.left, right: rect.right, height: rect.height };
      });
      return {
        name: svg.getAttribute('aria-label'),
        box: { left: box.left, right: box.right },
        scale: box.width / svg.viewBox.baseVal.width,
        texts,
      };
    })`)) as ChartMeasure[];
    expect(charts.length).toBe(10);
    for (const chart of charts) {
      // Not shrunk to fit: one unit of the drawing is one CSS pixel, so 13 px text is 13 px on screen.
      expect(chart.scale, `${chart.name} is scaled`).toBeCloseTo(1, 2);
      expect(chart.box.right, `${chart.name} is cut by the page`).toBeLessThanOrEqual(1366);
      for (const text of chart.texts) {
        expect(text.left, `"${text.text}" in ${chart.name}`).toBeGreaterThanOrEqual(chart.box.left - 0.5);
        expect(text.right, `"${text.text}" in ${chart.name}`).toBeLessThanOrEqual(chart.box.right + 0.5);
        expect(text.height, `"${text.text}" in ${chart.name}`).toBeGreaterThanOrEqual(12);
      }
    }
    const tokens = charts.find((chart) => chart.name === 'LLM tokens per day (UTC)');
    expect(tokens?.texts.some((text) => text.text === '12345')).toBe(true);
    const sent = charts.find((chart) => chart.name === 'Prompts sent per local day');
    // 12 participants, less Bea's skipped day and Cy's three paused days.
    expect(sent?.texts.map((text) => text.text)).toEqual(expect.arrayContaining(['2026-03-08', '11', '12']));
  });

  it('shows the adherence grid: each cell as it happened, sortable, each row linking to the participant', async () => {
    await page.getByRole('link', { name: 'Adherence' }).click();
    await page.getByRole('heading', { name: 'Adherence' }).waitFor(WAIT);
    const grid = await edges('#adherence');
    expect(grid.right).toBeLessThanOrEqual(grid.viewport);
    expect(grid.hiddenByScrolling).toBe(false);
    expect(await page.locator('#adherence th.date').count()).toBe(14);

    const cellsOf = async (name: string) =>
      (await page.evaluate(`[...document.querySelectorAll('#adherence tbody tr')]
        .find((row) => row.querySelector('th').textContent.includes(${JSON.stringify(name)}))
        .querySelectorAll('td.day')
        .values()
        .map((cell) => cell.className.replace('day ', ''))
        .toArray()`)) as string[];
    expect(await cellsOf('Bea Skipped')).toEqual(
      DATES.map((_, day) => (day === SKIPPED_DAY ? 'not-sent' : outcome(1, day))),
    );
    expect(await cellsOf('Cy Paused')).toEqual(
      DATES.map((_, day) => (PAUSED_DAYS.includes(day) ? 'paused' : outcome(2, day))),
    );
    const paused = page
      .getByRole('row', { name: /Cy Paused/ })
      .locator('td.day')
      .nth(PAUSED_DAYS[0] ?? 0);
    expect(await paused.getAttribute('title')).toBe('2026-03-10: paused');

    // Lowest adherence first (the default): Bea, Done on 3 of 13 prompts; then sorted by name.
    const names = () => page.locator('#adherence tbody th a').allTextContents();
    expect((await names())[0]).toBe('Bea Skipped');
    await page.getByRole('link', { name: 'Participant', exact: true }).click();
    await page.waitForURL(/sort=name/);
    expect((await names()).slice(0, 3)).toEqual(['Bea Skipped', 'Cy Paused', 'Maximiliana Fernández-Oyarzábal']);

    await page.getByRole('link', { name: 'Maximiliana Fernández-Oyarzábal' }).click();
    await page.getByRole('heading', { name: 'Maximiliana Fernández-Oyarzábal' }).waitFor(WAIT);
    expect(problems).toEqual([]);
  });
});
