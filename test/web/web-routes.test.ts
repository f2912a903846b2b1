/**
 * The dashboard's sign-in and CSRF rules and the web-chat routes, in process (`app.server.inject`), without a browser.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { startTestApplication } from '../support/test-application.ts';

const TOKEN = 'web-routes-token';
let app: Application;

async function startApp(environment: Record<string, string>): Promise<Application> {
  const started = await startTestApplication({
    ...environment,
  });
  return started;
}

afterEach(async () => {
  await app?.stop();
});

const cookieOf = (setCookie: string | string[] | undefined): string => String(setCookie).split(';')[0] ?? '';
const csrfOf = (page: string): string => /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '';

async function enroll(phone: string, channel: string): Promise<{ id: string; chat_url?: string }> {
  const response = await app.server.inject({
    method: 'POST',
    url: '/conversation/participants',
    headers: { authorization: `Bearer ${TOKEN}` },
    payload: { phone_number: phone, name: 'Ada', channel },
  });
  expect(response.statusCode).toBe(201);
  return response.json().result;
}

describe('dashboard sign-in and CSRF', () => {
  it('redirects to the sign-in form, refuses a wrong token, and protects actions with the CSRF token and Origin', async () => {
    app = await startApp({ PROMPTPIPE_API_TOKEN: TOKEN });
    const anonymous = await app.server.inject({ method: 'GET', url: '/dashboard' });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/dashboard/login');

    const wrong = await app.server.inject({
      method: 'POST',
      url: '/dashboard/login',
      payload: 'token=nope',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('Wrong token');
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const signedIn = await app.server.inject({
      method: 'POST',
      url: '/dashboard/login',
      payload: `token=${TOKEN}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(signedIn.statusCode).toBe(303);
    expect(String(signedIn.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
    const cookie = cookieOf(signedIn.headers['set-cookie']);
    const page = await app.server.inject({ method: 'GET', url: '/dashboard/enroll', headers: { cookie } });
    expect(page.statusCode).toBe(200);
    const csrf = csrfOf(page.body);
    expect(csrf.length).toBeGreaterThan(20);

    const form = (body: string, headers: Record<string, string> = {}) =>
      app.server.inject({
        method: 'POST',
        url: '/dashboard/enroll',
        payload: body,
        headers: { cookie, host: 'localhost', 'content-type': 'application/x-www-form-urlencoded', ...headers },
      });
    expect((await form('phone_number=%2B15551230001')).statusCode).toBe(403);
    expect(
      (await form(`phone_number=%2B15551230001&_csrf=${csrf}`, { origin: 'https://evil.example' })).statusCode,
    ).toBe(403);
    // A token is good only with the session it was made for.
    const other = await signedInSession();
    const crossed = await form(`phone_number=%2B15551230001&_csrf=${other.csrf}`);
    expect(crossed.statusCode).toBe(403);
    expect(crossed.body).toContain('missing or wrong CSRF token');
    expect(await app.store.participants.count()).toBe(0);
    const enrolled = await form(`phone_number=%2B15551230001&name=Bo&_csrf=${csrf}`, { origin: 'http://localhost' });
    expect(enrolled.statusCode).toBe(303);
    expect(enrolled.headers.location).toMatch(/^\/dashboard\/participants\/conv_/);
    expect(await app.store.participants.count()).toBe(1);

    const listed = await app.server.inject({ method: 'GET', url: '/dashboard?search=bo', headers: { cookie } });
    expect(listed.body).toContain('+15551230001');
    const filteredOut = await app.server.inject({
      method: 'GET',
      url: '/dashboard?status=paused',
      headers: { cookie },
    });
    expect(filteredOut.body).not.toContain('+15551230001');
  });

  it('is open without PROMPTPIPE_API_TOKEN, like the API', async () => {
    app = await startApp({});
    const page = await app.server.inject({ method: 'GET', url: '/dashboard' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Participants</h1>');
  });
});

async function signedInSession(): Promise<{ cookie: string; csrf: string }> {
  const signedIn = await app.server.inject({
    method: 'POST',
    url: '/dashboard/login',
    payload: `token=${TOKEN}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const cookie = cookieOf(signedIn.headers['set-cookie']);
  const page = await app.server.inject({ method: 'GET', url: '/dashboard/enroll', headers: { cookie } });
  return { cookie, csrf: csrfOf(page.body) };
}

describe('dashboard enrolment and overview', () => {
  it('CSV upload reuses the bulk import: every row checked, nothing enrolled on an error unless partial', async () => {
    app = await startApp({ PROMPTPIPE_API_TOKEN: TOKEN, ENROLL_GREETING_RATE: '2' });
    const { cookie, csrf } = await signedInSession();
    const upload = (csv: string, partial = false) =>
      app.server.inject({
        method: 'POST',
        url: '/dashboard/enroll/csv',
        payload: new URLSearchParams({ _csrf: csrf, csv, ...(partial ? { partial: 'true' } : {}) }).toString(),
        headers: {
          cookie,
          host: 'localhost',
          origin: 'http://localhost',
          'content-type': 'application/x-www-form-urlencoded',
        },
      });
    const csv = 'phone_number,name,language\n+15550100001,Ana,es\n+15550100002,Bad,xx-nope\n+15550100003,Cy,\n';
    const refused = await upload(csv);
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('nothing enrolled');
    expect(refused.body).toContain('row 2 language');
    expect(await app.store.participants.count()).toBe(0);

    const wrongColumns = await upload('phone,name\n+15550100001,Ana\n');
    expect(wrongColumns.statusCode).toBe(400);
    expect(wrongColumns.body).toContain('phone_number column is missing');

    const partial = await upload(csv, true);
    expect(partial.statusCode).toBe(303);
    expect(decodeURIComponent(String(partial.headers.location))).toContain(
      '2 enrolled, 0 skipped (already enrolled), 1 error(s)',
    );
    expect((await app.store.participants.getByPhone('+15550100001'))?.language).toBe('es');
    // Greetings are paced through the durable jobs, exactly like the API import.
    const greetings = (await app.store.research.jobsPage({}, undefined, 100)).filter(
      (job) => job.kind === 'enroll_greeting',
    );
    expect(greetings).toHaveLength(2);

    const again = await upload(csv, true);
    expect(decodeURIComponent(String(again.headers.location))).toContain('0 enrolled, 2 skipped (already enrolled)');
    const roster = await app.server.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
    expect(roster.body).toContain('<th scope="col">Language</th>');
    expect(roster.body).toContain('<td class="language">es</td>');
  });

  it('the overview charts prompts, answers, Done, latency, LLM calls, tokens, errors and failed deliveries', async () => {
    app = await startApp({ PROMPTPIPE_API_TOKEN: TOKEN });
    const { cookie } = await signedInSession();
    const call = { purpose: 'intake', model: 'm', providerHost: 'h', latencyMs: 5 };
    const day1 = new Date('2026-03-01T10:00:00Z');
    const day2 = new Date('2026-03-02T10:00:00Z');
    await app.store.llmCalls.record({ ...call, outcome: 'success', totalTokens: 1200, createdAt: day1 });
    await app.store.llmCalls.record({ ...call, outcome: 'success', totalTokens: 300, createdAt: day2 });
    await app.store.llmCalls.record({ ...call, outcome: 'llm_error', createdAt: day2 });
    const page = await app.server.inject({ method: 'GET', url: '/dashboard/overview', headers: { cookie } });
    expect(page.statusCode).toBe(200);
    for (const title of [
      'Participants by status',
      'Prompts sent per local day',
      'Prompts answered per local day',
      'Done per local day',
      'Median reply time per local day (minutes)',
      'LLM calls per day (UTC)',
      'LLM tokens per day (UTC)',
      'LLM errors per day (UTC)',
      'Failed deliveries per day (UTC)',
    ]) {
      expect(page.body).toContain(`aria-label="${title}"`);
    }
    /** The bars of one chart: label → value, for the dates the test wrote (the chart shows 14, zeros included). */
    const bars = (title: string) => {
      const chart = page.body.split(`aria-label="${title}"`)[1]?.split('</svg>')[0] ?? '';
      const pairs: Record<string, string> = {};
      for (const [, label, value] of chart.matchAll(
        /<g class="bar">.*?<text[^>]*>([^<]*)<\/text>.*?<text class="value"[^>]*>([^<]*)<\/text><\/g>/g,
      )) {
        if (label === '2026-03-01' || label === '2026-03-02') pairs[label] = value ?? '';
      }
      return pairs;
    };
    expect(bars('LLM calls per day (UTC)')).toEqual({ '2026-03-01': '1', '2026-03-02': '2' });
    expect(bars('LLM tokens per day (UTC)')).toEqual({ '2026-03-01': '1200', '2026-03-02': '300' });
    expect(bars('LLM errors per day (UTC)')).toEqual({ '2026-03-01': '0', '2026-03-02': '1' });
  });
});

describe('web chat routes', () => {
  it('returns chat_url at enrolment, shows one participant only, validates input, and revokes links', async () => {
    app = await startApp({ PROMPTPIPE_API_TOKEN: TOKEN, PROMPTPIPE_CHANNEL: 'webchat,webhook' });
    const ada = await enroll('+15551230001', 'webchat');
    const bob = await enroll('+15551230002', 'webchat');
    const onWebhook = await enroll('+15551230003', 'webhook');
    expect(ada.chat_url).toMatch(/^\/chat\/[A-Za-z0-9_-]{43}$/);
    expect(bob.chat_url).not.toBe(ada.chat_url);
    expect(onWebhook.chat_url).toBeUndefined();

    const sent = await app.server.inject({
      method: 'POST',
      url: `${ada.chat_url}/messages`,
      payload: { text: 'only Ada wrote this' },
    });
    expect(sent.statusCode).toBe(202);
    await expect
      .poll(async () => (await app.server.inject({ method: 'GET', url: String(ada.chat_url) })).body)
      .toContain('only Ada wrote this');
    const bobPage = await app.server.inject({ method: 'GET', url: String(bob.chat_url) });
    expect(bobPage.statusCode).toBe(200);
    expect(bobPage.body).not.toContain('only Ada wrote this');

    const empty = await app.server.inject({ method: 'POST', url: `${ada.chat_url}/messages`, payload: { text: '  ' } });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ status: 'error' });
    const unknown = await app.server.inject({
      method: 'POST',
      url: `/chat/${'x'.repeat(43)}/messages`,
      payload: { text: 'hi' },
    });
    expect(unknown.statusCode).toBe(404);

    // Revoking (as the dashboard does) issues a new link; the old one stops working.
    const renewed = await app.server.inject({
      method: 'GET',
      url: `/conversation/participants/${ada.id}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(renewed.json().result.chat_url).toBe(ada.chat_url);
    const signedIn = await app.server.inject({
      method: 'POST',
      url: '/dashboard/login',
      payload: `token=${TOKEN}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const cookie = cookieOf(signedIn.headers['set-cookie']);
    const participantPage = await app.server.inject({
      method: 'GET',
      url: `/dashboard/participants/${ada.id}`,
      headers: { cookie },
    });
    expect(participantPage.body).toContain(String(ada.chat_url));
    const revoke = await app.server.inject({
      method: 'POST',
      url: `/dashboard/participants/${ada.id}/chat-link`,
      payload: `_csrf=${csrfOf(participantPage.body)}`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(revoke.statusCode).toBe(303);
    expect((await app.server.inject({ method: 'GET', url: String(ada.chat_url) })).statusCode).toBe(404);
    const after = await app.server.inject({
      method: 'GET',
      url: `/conversation/participants/${ada.id}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const newUrl = after.json().result.chat_url as string;
    expect(newUrl).not.toBe(ada.chat_url);
    expect((await app.server.inject({ method: 'GET', url: newUrl })).statusCode).toBe(200);
  });
});
