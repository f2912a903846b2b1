/**
 * `SAFETY_COACH_TURN=hold` against the real server process: a flagged message gets the safety message and no coach
 * turn; the participant's further messages wait for the held turn; the held turn survives a SIGKILL; staff take over
 * and talk meanwhile; resolving the alert runs the held turn once, its request holding the flagged message, the
 * safety message and the staff exchange in order; staff may discard it instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELD_TURN_HINT } from '../../src/safety/held-coach-turn.ts';
import { DEFAULT_SAFETY_MESSAGES } from '../../src/safety/safety-messages.ts';
import { SAFETY_MESSAGE_MARK } from '../../src/safety/safety-screen.ts';
import { STAFF_MESSAGE_MARK } from '../../src/safety/takeover-service.ts';
import { describeOutput, waitFor } from '../support/server-process.ts';
import { startWebhookStudyServer, type WebhookStudyServer } from '../support/webhook-study-server.ts';

const API_TOKEN = 'held-turn-e2e-api-token';
const HELD_PHONE = '+15551230601';
const DISCARD_PHONE = '+15551230602';
const GREETING = 'Hello, I am your coach.';
const RISKY = 'Honestly I want to kill myself';
const FOLLOW_UP = 'Is anyone there?';
const STAFF_TEXT = 'This is Sam from the study team. I am here with you.';
const ANSWER_TO_STAFF = 'Thank you Sam, I called my sister';
const HELD_REPLY = 'I am glad you reached your sister and spoke with Sam.';
const SAFETY_EN = DEFAULT_SAFETY_MESSAGES['en'] ?? '';

let study: WebhookStudyServer;

beforeAll(async () => {
  study = await startWebhookStudyServer({
    apiToken: API_TOKEN,
    env: { SAFETY_COACH_TURN: 'hold' },
    respond: (request) => {
      const said = request.lastMessage?.content ?? '';
      if (said.includes('expecting a greeting')) return { content: GREETING };
      if (said === HELD_TURN_HINT) return { content: HELD_REPLY };
      return { content: `Coach heard: ${said}` };
    },
  });
}, 60_000);

afterAll(async () => {
  await study?.close();
}, 60_000);

const call = (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> =>
  study.call(method, path, body);

/** What reached the phone, once per message: a delivery repeated after a SIGKILL carries the same idempotency key. */
function deliveredTo(phone: string): string[] {
  const seen = new Set<string>();
  return study.gateway.requests.flatMap((request) => {
    const key = String(request.headers['idempotency-key']);
    const message = JSON.parse(request.body) as { to: string; text?: string; question?: string };
    if (message.to !== phone || seen.has(key)) return [];
    seen.add(key);
    return [message.text ?? message.question ?? ''];
  });
}

async function enroll(phone: string): Promise<string> {
  const response = await call('POST', '/conversation/participants', { phone_number: phone, name: 'P' });
  expect(response.status).toBe(201);
  return ((await response.json()) as { result: { id: string } }).result.id;
}

async function send(from: string, text: string, id: string): Promise<void> {
  expect((await call('POST', '/channels/webhook/messages', { from, text, id })).status).toBe(202);
}

async function openAlert(participantId: string): Promise<{ id: string; kind: string }> {
  const response = await call('GET', `/alerts?participant_id=${participantId}&status=open`);
  const alerts = ((await response.json()) as { result: { alerts: { id: string; kind: string }[] } }).result.alerts;
  expect(alerts.map((alert) => alert.kind)).toEqual(['risk']);
  return alerts[0] ?? { id: '', kind: '' };
}

async function transcript(participantId: string): Promise<string[]> {
  const response = await call('GET', `/conversation/participants/${participantId}/history`);
  return ((await response.json()) as { result: { content: string }[] }).result.map((entry) => entry.content);
}

/** A dashboard session of the API token's holder (the sign-in form's cookie). */
async function signIn(): Promise<string> {
  const response = await fetch(`${study.server.baseUrl}/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${API_TOKEN}`,
    redirect: 'manual',
  });
  return String(response.headers.get('set-cookie')).split(';')[0] ?? '';
}

async function dashboardPage(path: string, cookie: string): Promise<string> {
  const page = await fetch(`${study.server.baseUrl}${path}`, { headers: { cookie } });
  expect(page.status).toBe(200);
  return page.text();
}

const safetyPage = async (participantId: string): Promise<string> =>
  dashboardPage(`/dashboard/participants/${participantId}/safety`, await signIn());
const HELD_NOTICE = "The coach's reply is held until staff resolve";

const modelCallsAbout = (text: string): number =>
  study.model.requests.filter((request) => request.body.messages.some((message) => message.content === text)).length;

describe('the coach turn held for a staff review, against the server process', () => {
  it('holds through a SIGKILL and a staff exchange, runs once when the review is cleared', {
    timeout: 150_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(study.server)));
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 20_000, [study.server]);
    const participantId = await enroll(HELD_PHONE);
    await wait('the greeting', () => deliveredTo(HELD_PHONE).includes(GREETING));

    await send(HELD_PHONE, RISKY, 'h-1');
    await wait('the safety message', () => deliveredTo(HELD_PHONE).includes(SAFETY_EN));
    await send(HELD_PHONE, FOLLOW_UP, 'h-2');
    await wait('the follow-up recorded', async () => (await transcript(participantId)).includes(FOLLOW_UP));
    expect(modelCallsAbout(RISKY)).toBe(0);
    expect(modelCallsAbout(FOLLOW_UP)).toBe(0);

    // A crash between the flag and the clearing loses nothing.
    await study.killAndRestart();
    expect(await safetyPage(participantId)).toContain(HELD_NOTICE);
    const base = `/conversation/participants/${participantId}`;
    expect((await call('POST', `${base}/takeover`, { timers: 'keep' })).status).toBe(201);
    expect((await call('POST', `${base}/staff-messages`, { text: STAFF_TEXT })).status).toBe(201);
    await send(HELD_PHONE, ANSWER_TO_STAFF, 'h-3');
    await wait('the answer to staff recorded', async () => (await transcript(participantId)).includes(ANSWER_TO_STAFF));
    expect((await call('POST', `${base}/handback`)).status).toBe(200);
    expect(deliveredTo(HELD_PHONE)).toEqual([GREETING, SAFETY_EN, STAFF_TEXT]);
    expect(modelCallsAbout(ANSWER_TO_STAFF)).toBe(0);

    // Bad input changes nothing; then the review is cleared and the held turn runs.
    const alert = await openAlert(participantId);
    const refused = await call('POST', `/alerts/${alert.id}/resolve`, { note: 'spoke with them', held_turn: 'later' });
    expect(refused.status).toBe(400);
    expect((await openAlert(participantId)).id).toBe(alert.id);
    const resolved = await call('POST', `/alerts/${alert.id}/resolve`, { note: 'Sam spoke with them; safe' });
    expect(resolved.status).toBe(200);
    await wait('the held turn', () => deliveredTo(HELD_PHONE).includes(HELD_REPLY));
    expect(await safetyPage(participantId)).not.toContain(HELD_NOTICE);

    const held = study.model.requests.filter((request) => request.lastMessage?.content === HELD_TURN_HINT);
    expect(held).toHaveLength(1);
    const contents = held[0]?.body.messages.map((message) => `${message.role}: ${message.content}`) ?? [];
    const flaggedAt = contents.indexOf(`user: ${RISKY}`);
    expect(flaggedAt).toBeGreaterThan(0);
    expect(contents.slice(flaggedAt)).toEqual([
      `user: ${RISKY}`,
      `assistant: ${SAFETY_MESSAGE_MARK} ${SAFETY_EN}`,
      `user: ${FOLLOW_UP}`,
      `assistant: ${STAFF_MESSAGE_MARK} ${STAFF_TEXT}`,
      `user: ${ANSWER_TO_STAFF}`,
      `user: ${HELD_TURN_HINT}`,
    ]);

    // Exactly once: another crash and time passing bring no second held turn; the next message is answered at once.
    await study.killAndRestart();
    expect((await call('POST', '/admin/clock', { advance_ms: 10 * 60_000 })).status).toBe(200);
    await send(HELD_PHONE, 'Going for a walk now', 'h-4');
    await wait('the next reply', () => deliveredTo(HELD_PHONE).includes('Coach heard: Going for a walk now'));
    expect(deliveredTo(HELD_PHONE).filter((text) => text === HELD_REPLY)).toHaveLength(1);
    expect(study.model.requests.filter((request) => request.lastMessage?.content === HELD_TURN_HINT)).toHaveLength(1);
  });

  it('discards the held turn when staff choose so on clearing', { timeout: 60_000 }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(study.server)));
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 20_000, [study.server]);
    const participantId = await enroll(DISCARD_PHONE);
    await wait('the greeting', () => deliveredTo(DISCARD_PHONE).includes(GREETING));
    await send(DISCARD_PHONE, RISKY, 'd-1');
    await wait('the safety message', () => deliveredTo(DISCARD_PHONE).includes(SAFETY_EN));
    const alert = await openAlert(participantId);
    const heldTurnsBefore = study.model.requests.filter(
      (request) => request.lastMessage?.content === HELD_TURN_HINT,
    ).length;
    // Resolved from the dashboard's inbox, its "discard the coach's held reply" box ticked.
    const cookie = await signIn();
    const inbox = await dashboardPage('/dashboard/alerts', cookie);
    expect(inbox).toContain('name="discard_held_turn"');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(inbox)?.[1] ?? '';
    const resolved = await fetch(`${study.server.baseUrl}/dashboard/alerts/${alert.id}/resolve`, {
      method: 'POST',
      headers: { cookie, origin: study.server.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, note: 'called them', discard_held_turn: '1' }).toString(),
      redirect: 'manual',
    });
    expect(resolved.status).toBe(303);
    const after = await call('GET', `/alerts/${alert.id}`);
    expect(((await after.json()) as { result: { status: string } }).result.status).toBe('resolved');
    // The next message is answered as usual, and is the first model call since: the held turn never ran.
    await send(DISCARD_PHONE, 'Thanks for the call', 'd-2');
    await wait('the next reply', () => deliveredTo(DISCARD_PHONE).includes('Coach heard: Thanks for the call'));
    expect(deliveredTo(DISCARD_PHONE)).toEqual([GREETING, SAFETY_EN, 'Coach heard: Thanks for the call']);
    expect(study.model.requests.filter((request) => request.lastMessage?.content === HELD_TURN_HINT)).toHaveLength(
      heldTurnsBefore,
    );
  });
});
