/**
 * The participant page reads as fields and sentences, not JSON, with every time in the participant's zone; the web
 * chat shows its times in the participant's zone too. In process (`app.server.inject`), after a scripted intake that
 * saves a profile and a daily schedule, with the manual clock at Mon 2 Mar 2026 14:00 UTC (15:00 in Berlin).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { createStudyCoach, SAID } from '../support/study-coach-script.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

const TOKEN = 'participant-page-token';
const unexpected: string[] = [];
let model: ScriptedOpenAiServer;
let app: Application;
let cookie = '';

async function enroll(phone: string, timezone?: string): Promise<{ id: string; chat_url: string }> {
  const response = await app.server.inject({
    method: 'POST',
    url: '/conversation/participants',
    headers: { authorization: `Bearer ${TOKEN}` },
    payload: { phone_number: phone, name: 'Ada', channel: 'webchat', ...(timezone ? { timezone } : {}) },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().result;
}

async function say(chatUrl: string, text: string): Promise<void> {
  const path = chatUrl.startsWith('http') ? new URL(chatUrl).pathname : chatUrl;
  const sent = await app.server.inject({ method: 'POST', url: `${path}/messages`, payload: { text } });
  expect(sent.statusCode, sent.body).toBe(202);
}

const page = async (url: string) => (await app.server.inject({ method: 'GET', url, headers: { cookie } })).body;
/** The text of the element with this attribute (`data-field="habit_domain"`, `id="participant-zone"`). */
const textOf = (body: string, attribute: string) =>
  new RegExp(`${attribute}[^>]*>([^<]*)<`).exec(body)?.[1]?.replaceAll('&#39;', "'");

beforeAll(async () => {
  model = await startScriptedOpenAiServer({ respond: createStudyCoach(unexpected) });
  app = await startTestApplication({
    PROMPTPIPE_API_TOKEN: TOKEN,
    PROMPTPIPE_CHANNEL: 'webchat',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
  });
  const signedIn = await app.server.inject({
    method: 'POST',
    url: '/dashboard/login',
    payload: `token=${TOKEN}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  cookie = String(signedIn.headers['set-cookie']).split(';')[0] ?? '';
}, 30_000);

afterAll(async () => {
  await app?.stop();
  await model?.close();
});

describe('the participant page', () => {
  it('shows the profile as fields, the schedule as a sentence and the events in the participant zone', async () => {
    const ada = await enroll('+15551230101', 'Europe/Berlin');
    await say(ada.chat_url, SAID.habit);
    await waitUntil('the coach to ask for the timing', async () =>
      (await page(`/dashboard/participants/${ada.id}`)).includes('When in your day'),
    );
    await say(ada.chat_url, SAID.timing);
    const body = await waitUntil('intake to finish', async () => {
      const shown = await page(`/dashboard/participants/${ada.id}`);
      return textOf(shown, 'id="sub-state"') === 'FEEDBACK' && shown.includes('class="schedule"') ? shown : undefined;
    });
    expect(unexpected).toEqual([]);

    expect(textOf(body, 'id="participant-zone"')).toBe('Europe/Berlin');
    expect(textOf(body, 'data-field="habit_domain"')).toBe('walking');
    expect(textOf(body, 'data-field="preferred_time"')).toBe('09:00');
    expect(textOf(body, 'data-field="prompt_anchor"')).toBe('after breakfast');
    expect(textOf(body, 'data-field="intensity"')).toBe('normal');
    expect(textOf(body, 'data-field="last_barrier"')).toBe('—');
    expect(textOf(body, 'data-field="success_total"')).toMatch(/^0 \/ \d+$/);
    expect(body).toContain('<dt>Habit</dt>');
    expect(body).toContain('<dt>Motivation</dt>');
    // 15:00 in Berlin now, so the next 09:00 is tomorrow's; the prompt goes out 10 minutes before (the prep time).
    expect(textOf(body, 'class="schedule"')).toBe('daily at 09:00 Europe/Berlin (next: Tue 3 Mar, 08:50)');
    expect(body).toMatch(/daily prompt: due <time datetime="2026-03-03T07:50:00.000Z">Tue 3 Mar, 08:50<\/time>/);

    expect(body).toContain('<th scope="col">Time (Europe/Berlin)</th>');
    const eventTimes = [...body.matchAll(/<tr><td><time datetime="([^"]+)">([^<]+)<\/time>/g)];
    expect(eventTimes.length).toBeGreaterThan(3);
    for (const [, instant, shown] of eventTimes) {
      expect(instant).toBe('2026-03-02T14:00:00.000Z');
      expect(shown).toBe('Mon 2 Mar, 15:00');
    }
    expect(body).toMatch(/<td><code>tool-called<\/code><\/td><td>name: save_user_profile; call id: /);
    // The conversation too; the raw JSON only behind the "raw data" toggles.
    expect(body).toContain('Conversation <small>(times in Europe/Berlin)</small>');
    expect(body).toMatch(/<footer>[^<]*<time datetime="2026-03-02T14:00:00.000Z">Mon 2 Mar, 15:00<\/time>/);
    expect(body).not.toContain(' UTC</time>');
    // (The transcript folds the model's tool calls and results in toggles of their own.)
    const outsideToggles = body.replace(/<details[^>]*>[\s\S]*?<\/details>/g, '');
    expect(outsideToggles).not.toMatch(/[{[]&#34;/);
    expect(outsideToggles).toMatch(
      /<td><code>schedule-created<\/code><\/td><td>schedule: \(id: sched_\w+; type: fixed; fixed time: 09:00; timezone: Europe\/Berlin/,
    );
    expect(body).toContain('<summary>raw data</summary><pre>{\n  &#34;habit_domain&#34;: &#34;walking&#34;');
  }, 60_000);

  it('names the zone it shows when the participant has none', async () => {
    const bo = await enroll('+15551230102');
    const body = await page(`/dashboard/participants/${bo.id}`);
    expect(textOf(body, 'id="participant-zone"')).toBe('— (times shown in UTC)');
    expect(body).toContain('<th scope="col">Time (UTC)</th>');
    expect(body).toContain('<p>No profile yet: the coach saves one during intake.</p>');
  });
});

describe('the web chat page', () => {
  it("shows times in the participant's zone, or leaves them to the browser's zone when it is unknown", async () => {
    const berlin = await enroll('+15551230103', 'Europe/Berlin');
    const path = (chatUrl: string) => (chatUrl.startsWith('http') ? new URL(chatUrl).pathname : chatUrl);
    const chat = (await app.server.inject({ method: 'GET', url: path(berlin.chat_url) })).body;
    expect(chat).toContain('data-time-zone="Europe/Berlin"');
    expect(chat).toMatch(/<footer><time datetime="2026-03-02T14:00:00.000Z">Mon 2 Mar, 15:00<\/time><\/footer>/);
    expect(chat).not.toContain('UTC</time>');

    const unknown = await enroll('+15551230104');
    const unzoned = (await app.server.inject({ method: 'GET', url: path(unknown.chat_url) })).body;
    // The page's script rewrites these in the browser's zone (checked in Chromium by dashboard-pages-browser.test.ts).
    expect(unzoned).toContain('data-time-zone=""');
    expect(unzoned).toMatch(/<time datetime="2026-03-02T14:00:00.000Z">Mon 2 Mar, 14:00<\/time>/);
  });
});
