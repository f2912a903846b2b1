/**
 * A signed-in coordinator exports from the dashboard: the export page builds download links, and the exports and
 * `/stats` accept the dashboard session as well as the API token — for reads only. In process (`app.server.inject`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { startTestApplication } from '../support/test-application.ts';

const TOKEN = 'export-page-token';
let app: Application;

function startApp(environment: Record<string, string> = {}): Promise<Application> {
  return startTestApplication({ PROMPTPIPE_API_TOKEN: TOKEN, ...environment });
}

afterEach(async () => {
  await app?.stop();
});

async function signIn(): Promise<string> {
  const signedIn = await app.server.inject({
    method: 'POST',
    url: '/dashboard/login',
    payload: `token=${TOKEN}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expect(signedIn.statusCode).toBe(303);
  return String(signedIn.headers['set-cookie']).split(';')[0] ?? '';
}

async function enroll(phone: string, name: string): Promise<string> {
  const response = await app.server.inject({
    method: 'POST',
    url: '/conversation/participants',
    headers: { authorization: `Bearer ${TOKEN}` },
    payload: { phone_number: phone, name },
  });
  expect(response.statusCode).toBe(201);
  return response.json().result.id;
}

const get = (url: string, headers: Record<string, string> = {}) => app.server.inject({ method: 'GET', url, headers });
const hrefs = (page: string) =>
  [...page.matchAll(/<li><a href="([^"]+)" download="([^"]+)">/g)].map((match) => ({
    href: (match[1] ?? '').replaceAll('&#38;', '&'),
    file: match[2],
  }));

describe('exporting with the dashboard session', () => {
  it('accepts a signed-in session on the exports and /stats, and nowhere else', async () => {
    app = await startApp();
    const ada = await enroll('+15551230201', 'Ada');
    const cookie = await signIn();

    const file = await get('/export/participants.csv', { cookie });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(file.body).toContain('+15551230201');
    const stats = await get('/stats', { cookie });
    expect(stats.statusCode).toBe(200);
    expect(stats.json().result.participants.total).toBe(1);

    // No session, an unknown one, or a read the API did not mark: the token is still required.
    expect((await get('/export/participants.csv')).statusCode).toBe(401);
    expect((await get('/export/participants.csv', { cookie: 'promptpipe_session=forged' })).statusCode).toBe(401);
    expect((await get('/conversation/participants', { cookie })).statusCode).toBe(401);
    expect((await get(`/conversation/participants/${ada}/history`, { cookie })).statusCode).toBe(401);
    // A state-changing request never rides on the cookie (a cross-site form could send it).
    const write = await app.server.inject({
      method: 'POST',
      url: '/conversation/participants',
      headers: { cookie },
      payload: { phone_number: '+15551230202' },
    });
    expect(write.statusCode).toBe(401);
    expect(await app.store.participants.count()).toBe(1);

    // Signing out ends it for the exports too.
    const page = await get('/dashboard/export', { cookie });
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const signedOut = await app.server.inject({
      method: 'POST',
      url: '/dashboard/logout',
      payload: `_csrf=${csrf}`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(signedOut.statusCode).toBe(303);
    expect((await get('/export/participants.csv', { cookie })).statusCode).toBe(401);
  });

  it('names the query parameter, not a command-line flag, when the pseudonym key is missing', async () => {
    app = await startApp();
    const cookie = await signIn();
    const refused = await get('/export/participants.csv?pseudonymize=true', { cookie });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain('pseudonymize=true needs EXPORT_PSEUDONYM_KEY');
    expect(refused.body).not.toContain('--pseudonymize');
  });
});

describe('the export page', () => {
  it('offers download links for the chosen tables, format, participants, date and pseudonymisation', async () => {
    app = await startApp({ EXPORT_PSEUDONYM_KEY: 'export-page-pseudonym-key' });
    const ada = await enroll('+15551230203', 'Ada');
    await enroll('+15551230204', 'Bo');
    const cookie = await signIn();

    const first = await get('/dashboard/export', { cookie });
    expect(first.statusCode).toBe(200);
    expect(first.body).toContain('<a href="/dashboard/export">Export</a>');
    expect(first.body).toContain(`<option value="${ada}" >Ada &middot; +15551230203</option>`);
    expect(first.body).not.toContain('id="downloads"');
    expect(first.body).not.toContain('id="pseudonym-note"');

    const query = `show=1&table=messages&table=daily_outcomes&format=jsonl&participant=${ada}&since=2026-03-01&pseudonymize=true`;
    const chosen = await get(`/dashboard/export?${query}`, { cookie });
    expect(chosen.statusCode).toBe(200);
    const links = hrefs(chosen.body);
    expect(links).toEqual([
      {
        href: `/export/messages.jsonl?participant=${ada}&since=2026-03-01&pseudonymize=true`,
        file: 'messages.jsonl',
      },
      {
        href: `/export/daily_outcomes.jsonl?participant=${ada}&since=2026-03-01&pseudonymize=true`,
        file: 'daily_outcomes.jsonl',
      },
    ]);
    // The links work with the session: pseudonymised, one participant.
    const people = await get(`/export/participants.jsonl?participant=${ada}&pseudonymize=true`, { cookie });
    expect(people.statusCode).toBe(200);
    const [row] = people.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(row.phone_number).toMatch(/^pn_[0-9a-f]{16}$/);
    expect(people.body).not.toContain('+15551230203');
    expect(people.body.trim().split('\n')).toHaveLength(1);
  });

  it('says what is wrong with a choice and shows no links', async () => {
    app = await startApp();
    const cookie = await signIn();
    const refused = async (query: string) => {
      const page = await get(`/dashboard/export?show=1&${query}`, { cookie });
      expect(page.statusCode).toBe(400);
      expect(hrefs(page.body)).toEqual([]);
      return /<p class="error" role="alert">([^<]+)<\/p>/.exec(page.body)?.[1];
    };
    expect(await refused('format=csv')).toBe('Choose at least one table.');
    expect(await refused('table=events&since=last+week')).toBe(
      'since &#34;last week&#34; is not a date (YYYY-MM-DD) or an ISO 8601 time.',
    );
    expect(await refused('table=events&participant=conv_gone')).toBe(
      'No participant with id conv_gone (deleted meanwhile?).',
    );
    expect(await refused('table=events&pseudonymize=true')).toBe(
      'Pseudonymising needs EXPORT_PSEUDONYM_KEY, which this server does not have.',
    );
    const page = await get('/dashboard/export', { cookie });
    expect(page.body).toContain('<input type="checkbox" name="pseudonymize" value="true" disabled>');
    expect(page.body).toMatch(
      /id="pseudonym-note">Pseudonymising is not available: <code>EXPORT_PSEUDONYM_KEY<\/code> is not set/,
    );
  });

  it('sends a visitor without a session to the sign-in form', async () => {
    app = await startApp();
    const page = await get('/dashboard/export');
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/dashboard/login');
  });
});
