/**
 * The roster's and the adherence grid's paging over HTTP, in process (`app.server.inject`, open dashboard): the pager's
 * links carry a row's key, so following Next to the end, Last, and Previous shows every participant once, with the
 * page's number; a link whose key is not one is refused with a clear error.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type Application, createApplication } from '../../src/main.ts';
import { adherenceRuleText } from '../../src/safety/adherence-alerts.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { adherenceAlertFixture } from '../support/alert-fixture.ts';
import { participantFixture } from '../support/participant-fixture.ts';

let app: Application;

afterEach(async () => {
  await app?.stop();
});

/** 120 participants, enrolled a minute apart (two at the same instant: the id orders them). */
async function startWithParticipants(count = 120): Promise<Application> {
  const config = loadConfig({
    API_ADDR: '127.0.0.1:0',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00Z',
    LOG_LEVEL: 'silent',
  });
  const store = await createSqliteStore({ filename: ':memory:' });
  for (let index = 0; index < count; index += 1) {
    const minute = index === 1 ? 0 : index;
    await store.participants.create(
      participantFixture(
        `p_${String(index).padStart(3, '0')}`,
        `+1555020${String(index).padStart(4, '0')}`,
        new Date(Date.UTC(2026, 1, 1, 0, minute)),
        {
          name: `Person ${index}`,
        },
      ),
    );
  }
  const started = await createApplication({ config, log: pino({ level: 'silent' }), store });
  await started.start();
  return started;
}

const get = async (url: string) => {
  const response = await app.server.inject({ method: 'GET', url });
  return { status: response.statusCode, body: response.body };
};
const link = (page: string, rel: string): string | undefined =>
  new RegExp(`<a href="([^"]+)" rel="${rel}">`).exec(page)?.[1]?.replaceAll('&#38;', '&');
const rosterIds = (page: string): string[] =>
  [...page.matchAll(/<a href="\/dashboard\/participants\/([^"]+)">/g)].map((match) => match[1] ?? '');
const pageNumber = (page: string): string | undefined => /Page (\d+ of \d+)/.exec(page)?.[1];

describe('roster pages by key', () => {
  it('shows every participant once going Next to the end, and the same pages going back', async () => {
    app = await startWithParticipants();
    const seen: string[] = [];
    const numbers: (string | undefined)[] = [];
    let page = (await get('/dashboard')).body;
    const pages: string[] = [page];
    for (;;) {
      seen.push(...rosterIds(page));
      numbers.push(pageNumber(page));
      const next = link(page, 'next');
      if (!next) break;
      page = (await get(next)).body;
      pages.push(page);
    }
    expect(numbers).toEqual(['1 of 3', '2 of 3', '3 of 3']);
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);
    expect(seen[0]).toBe('p_119');
    expect(seen.slice(-2)).toEqual(['p_001', 'p_000']);

    const last = (await get(link(pages[0] ?? '', 'last') ?? '')).body;
    expect(pageNumber(last)).toBe('3 of 3');
    expect(rosterIds(last)).toEqual(seen.slice(-50));
    const previous = (await get(link(pages[2] ?? '', 'prev') ?? '')).body;
    expect(rosterIds(previous)).toEqual(rosterIds(pages[1] ?? ''));
    expect(pageNumber(previous)).toBe('2 of 3');
    expect(link(pages[0] ?? '', 'prev')).toBeUndefined();
    expect(link(last, 'next')).toBeUndefined();
    // A page asked for by its number alone (typed, or an old bookmark) is that page.
    const second = (await get('/dashboard?page=2')).body;
    expect(rosterIds(second)).toEqual(seen.slice(50, 100));
    expect(pageNumber(second)).toBe('2 of 3');
  });

  it('refuses a page link whose key is not one; a page number past the end shows the last page', async () => {
    app = await startWithParticipants(3);
    for (const url of ['/dashboard?after=yesterday', '/dashboard?before=2026-02-01T00:00:00.000Z']) {
      const refused = await get(url);
      expect(refused.status).toBe(400);
      expect(refused.body).toContain("must be a page link's key");
    }
    const numbered = await get('/dashboard?page=7');
    expect(numbered.status).toBe(200);
    expect(pageNumber(numbered.body)).toBe('1 of 1');
    expect(rosterIds(numbered.body)).toEqual(['p_002', 'p_001', 'p_000']);
  });
});

describe('roster filter on adherence alerts', () => {
  it('lists only participants with an unresolved adherence alert (of a rule), kept by the filters and pager', async () => {
    app = await startWithParticipants(60);
    const since = new Date('2026-02-20T00:00:00.000Z');
    const alert = async (id: string, participantId: string, rule: string, status?: 'resolved') => {
      const createdAt = new Date('2026-03-01T00:00:00.000Z');
      await app.store.alerts.create(adherenceAlertFixture(id, participantId, rule, createdAt), ['dashboard']);
      if (status) await app.store.alerts.resolve(id, 'ada', 'done', new Date('2026-03-01T01:00:00.000Z'));
    };
    const missed = adherenceRuleText.missedPrompts(2, since);
    const silent = adherenceRuleText.silentDays(3, since);
    // 52 participants with a missed-prompts alert (more than a page), one with a silent-days alert, one whose alert
    // was resolved; a risk alert is no adherence alert.
    for (let index = 0; index < 52; index += 1) {
      await alert(`alert_m${index}`, `p_${String(index).padStart(3, '0')}`, missed);
    }
    await alert('alert_s', 'p_055', silent);
    await alert('alert_r', 'p_056', silent, 'resolved');
    await app.store.alerts.create(
      {
        id: 'alert_risk',
        participantId: 'p_057',
        kind: 'risk',
        detector: 'keywords',
        rule: 'kill myself',
        score: undefined,
        urgency: 'urgent',
        reason: 'test',
        sourceMessageId: undefined,
        createdAt: new Date('2026-03-01T00:00:00.000Z'),
      },
      ['dashboard'],
    );

    const silentPage = (await get('/dashboard?adherence_alert=silent-days')).body;
    expect(rosterIds(silentPage)).toEqual(['p_055']);
    expect(silentPage).toContain('<option value="silent-days" selected>');
    expect(silentPage).toContain(`title="Adherence alert: ${silent}"`);

    const first = (await get('/dashboard?adherence_alert=any')).body;
    expect(first).toContain('53 participant(s)');
    const next = link(first, 'next') ?? '';
    expect(next).toContain('adherence_alert=any');
    const second = (await get(next)).body;
    const all = [...rosterIds(first), ...rosterIds(second)];
    expect(new Set(all).size).toBe(53);
    expect(all).toContain('p_055');
    expect(all).not.toContain('p_056');
    expect(all).not.toContain('p_057');
    expect(first.match(/class="adherence-alert"/g)).toHaveLength(50);

    const missedPage = (await get('/dashboard?adherence_alert=missed-prompts&search=Person 5')).body;
    expect(rosterIds(missedPage).sort()).toEqual(['p_005', 'p_050', 'p_051']);
    // Without the filter everyone is listed, and only those with an open adherence alert are marked.
    const unfiltered = (await get('/dashboard?search=Person 5')).body;
    expect(rosterIds(unfiltered)).toHaveLength(11);
    expect(unfiltered.match(/class="adherence-alert"/g)).toHaveLength(4);

    const refused = await get('/dashboard?adherence_alert=sometimes');
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('adherence_alert must be one of any, missed-prompts, silent-days');
  });
});

describe('adherence grid pages by key', () => {
  it('pages through everyone in each order, and refuses a malformed key', async () => {
    app = await startWithParticipants(75);
    for (const sort of ['adherence', 'name', 'enrolled']) {
      const first = (await get(`/dashboard/adherence?sort=${sort}`)).body;
      const next = link(first, 'next');
      expect(next, sort).toBeDefined();
      const second = (await get(next ?? '')).body;
      const ids = [...rosterIds(first), ...rosterIds(second)];
      expect(new Set(ids).size, sort).toBe(75);
      expect(link(second, 'next'), sort).toBeUndefined();
    }
    const refused = await get('/dashboard/adherence?sort=adherence&after=high,p_001');
    expect(refused.status).toBe(400);
    expect(refused.body).toContain("must be a page link's key");
  });
});
