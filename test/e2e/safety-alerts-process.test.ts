/**
 * The safety net against the real `promptpipe serve` process (webhook channel, scripted model with the model check
 * on, manual clock, e-mail and webhook alert routes): a risky message in English and in Spanish gets the study's
 * safety message in the participant's language and no coach turn, while both alert routes are down or hanging (a
 * route that is down never holds the safety message up); the server is SIGKILLed between detection and delivery and
 * each alert still reaches the local SMTP server and the webhook capture, signed; a message only the model flags goes
 * the same way while an ordinary one is answered by the coach; acknowledging and resolving are recorded.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/http/webhook-signature.ts';
import { DEFAULT_SAFETY_MESSAGES } from '../../src/safety/safety-messages.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import {
  describeOutput,
  freePort,
  killServer,
  type ServerProcess,
  startServer,
  stopServer,
  waitFor,
} from '../support/server-process.ts';
import { type SmtpCapture, startSmtpCapture } from '../support/smtp-capture.ts';

const API_TOKEN = 'safety-e2e-api-token';
const ALERT_SECRET = 'safety-e2e-alert-secret';
const CLOCK_START = '2026-03-02T14:00:00.000Z';
const ENGLISH = '+15551230101';
const SPANISH = '+15551230102';
const THIRD = '+15551230103';
const GREETING = 'Hi! Which habit would you like to build?';
const ASKS_FOR_A_PERSON = 'Can a real person call me today?';
const MODEL_FLAGGED = 'I will just disappear and nobody will notice';

interface AlertView {
  id: string;
  kind: string;
  participant_id: string;
  detector: string;
  rule: string | null;
  status: string;
  acknowledged_by: string | null;
  acknowledge_note: string | null;
  resolved_by: string | null;
  resolve_note: string | null;
  deliveries: { route: string; status: string; attempts: number; last_error: string | null }[];
}

let serverProcess: ServerProcess | undefined;
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let alertHook: HttpReceiver;
let smtp: SmtpCapture | undefined;
let smtpPort: number;
let stateDir: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-safety-'));
  gateway = await startHttpReceiver();
  alertHook = await startHttpReceiver();
  smtpPort = await freePort();
  model = await startScriptedOpenAiServer({
    respond: (request) => {
      const said = request.lastMessage?.content ?? '';
      if (request.body.messages[0]?.content?.startsWith('You screen messages')) {
        const risky = said === MODEL_FLAGGED;
        return {
          content: JSON.stringify({ risk: risky, score: risky ? 0.9 : 0.05, category: risky ? 'self-harm' : 'none' }),
        };
      }
      if (request.lastMessage?.role === 'tool') return { content: 'I have let the study team know.' };
      if (said === ASKS_FOR_A_PERSON) {
        return {
          toolCalls: [{ name: 'flag_for_staff', arguments: { reason: 'Asks to talk to a person', urgency: 'urgent' } }],
        };
      }
      return { content: said.includes('expecting a greeting') ? GREETING : `Coach heard: ${said}` };
    },
  });
}, 60_000);

afterAll(async () => {
  if (serverProcess) await stopServer(serverProcess);
  await model?.close();
  await gateway?.close();
  await alertHook?.close();
  await smtp?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

const environment = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  PROMPTPIPE_STATE_DIR: stateDir,
  OPENAI_BASE_URL: model.baseUrl,
  OPENAI_API_KEY: 'test',
  GENAI_MODEL: 'scripted',
  LLM_MAX_RETRIES: '0',
  PROMPTPIPE_CLOCK: 'manual',
  PROMPTPIPE_CLOCK_START: CLOCK_START,
  PROMPTPIPE_CHANNEL: 'webhook',
  PROMPTPIPE_WEBHOOK_URL: gateway.url,
  PROMPTPIPE_API_TOKEN: API_TOKEN,
  SAFETY_MODEL_CHECK: 'true',
  SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
  ALERT_EMAIL_TO: 'safety-team@study.example',
  ALERT_WEBHOOK_URL: alertHook.url,
  ALERT_WEBHOOK_SECRET: ALERT_SECRET,
  LOG_LEVEL: 'warn',
});

async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
  return fetch(`${serverProcess?.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function enroll(phone: string, language: string): Promise<string> {
  const response = await call('POST', '/conversation/participants', { phone_number: phone, name: 'P', language });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { result: { id: string } }).result.id;
}

async function send(from: string, text: string, id: string): Promise<void> {
  const response = await call('POST', '/channels/webhook/messages', { from, text, id });
  expect(response.status).toBe(202);
}

const deliveredTo = (phone: string): string[] =>
  gateway.requests
    .map((request) => JSON.parse(request.body) as { to: string; text: string })
    .filter((message) => message.to === phone)
    .map((message) => message.text);

async function alerts(): Promise<AlertView[]> {
  const response = await call('GET', '/alerts');
  expect(response.status).toBe(200);
  return ((await response.json()) as { result: { alerts: AlertView[] } }).result.alerts;
}

const coachTurnsAbout = (text: string): number =>
  model.requests.filter(
    (request) =>
      !request.body.messages[0]?.content?.startsWith('You screen messages') &&
      request.body.messages.some((message) => message.content === text),
  ).length;

describe('the safety net, against the server process', () => {
  it('safety message first, alerts at least once through a SIGKILL, model flags, acknowledgement', {
    timeout: 120_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => {
      console.error(describeOutput(serverProcess));
      console.error(`gateway: ${gateway.requests.map((request) => request.body).join('\n')}`);
    });
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 20_000, [serverProcess]);
    // The alert webhook hangs and the SMTP server is not up yet: both routes are down when the alerts are raised.
    alertHook.respond = () => ({ status: 200, delayMs: 600_000 });
    serverProcess = await startServer(environment());
    const english = await enroll(ENGLISH, 'en');
    const spanish = await enroll(SPANISH, 'es');
    await wait(
      'the greetings',
      () => deliveredTo(ENGLISH).includes(GREETING) && deliveredTo(SPANISH).includes(GREETING),
    );

    await send(ENGLISH, 'Honestly I want to kill myself', 'risk-en');
    await send(SPANISH, 'A veces me quiero MORIR', 'risk-es');
    await wait('the English safety message', () => deliveredTo(ENGLISH).includes(DEFAULT_SAFETY_MESSAGES['en'] ?? '?'));
    await wait('the Spanish safety message', () => deliveredTo(SPANISH).includes(DEFAULT_SAFETY_MESSAGES['es'] ?? '?'));
    // The coach said nothing about either message, and was not even asked.
    expect(deliveredTo(ENGLISH)).toEqual([GREETING, DEFAULT_SAFETY_MESSAGES['en']]);
    expect(deliveredTo(SPANISH)).toEqual([GREETING, DEFAULT_SAFETY_MESSAGES['es']]);
    expect(coachTurnsAbout('Honestly I want to kill myself')).toBe(0);
    expect(coachTurnsAbout('A veces me quiero MORIR')).toBe(0);

    const raised = await alerts();
    expect(raised.map((alert) => [alert.participant_id, alert.detector, alert.rule, alert.status]).sort()).toEqual(
      [
        [english, 'keywords', 'kill myself', 'open'],
        [spanish, 'keywords', 'quiero morir', 'open'],
      ].sort(),
    );
    // Detected, recorded, not yet delivered: the webhook is hanging, and e-mail is failing.
    await wait('the webhook route called', () => alertHook.requests.length >= 1);
    await wait('an e-mail attempt failed', async () =>
      (await alerts()).some((alert) => alert.deliveries.some((d) => d.route === 'email' && d.last_error !== null)),
    );
    expect(smtp).toBeUndefined();
    await killServer(serverProcess);

    // Restart with both routes up: every alert is delivered, by e-mail and to the webhook.
    smtp = await startSmtpCapture(smtpPort);
    alertHook.respond = () => ({ status: 200 });
    serverProcess = await startServer(environment());
    const advanced = await call('POST', '/admin/clock', { advance_ms: 5 * 60_000 });
    expect(advanced.status).toBe(200);
    await wait('every alert delivered on every route', async () =>
      (await alerts()).every((alert) => alert.deliveries.every((delivery) => delivery.status === 'delivered')),
    );
    const routes = (await alerts())[0]?.deliveries.map((delivery) => delivery.route);
    expect(routes).toEqual(['dashboard', 'email', 'webhook']);
    for (const alert of raised) {
      const mail = smtp.mails.find((candidate) => candidate.raw.includes(alert.id));
      expect(mail?.to).toEqual(['safety-team@study.example']);
      // Who and why, never the message itself nor a phone number: e-mail is not where a crisis is read.
      expect(mail?.raw).not.toContain('Honestly');
      expect(mail?.raw).not.toContain('+1555');
      const hooks = alertHook.requests.filter((request) => request.body.includes(alert.id));
      expect(hooks.length).toBeGreaterThanOrEqual(1);
      for (const hook of hooks) {
        const timestamp = String(hook.headers['x-promptpipe-timestamp']);
        expect(
          verifySignature(ALERT_SECRET, hook.body, String(hook.headers['x-promptpipe-signature']), timestamp),
        ).toBe(true);
        const body = JSON.parse(hook.body) as { text: string; alert: { participant_id: string } };
        expect(body.text).toContain('PromptPipe URGENT alert');
        expect(body.alert.participant_id).toBe(alert.participant_id);
      }
    }

    // The model check: an ordinary message is answered by the coach; one only the model flags goes the safety way.
    const third = await enroll(THIRD, 'en');
    await wait('the third greeting', () => deliveredTo(THIRD).includes(GREETING));
    await send(THIRD, 'I walked for ten minutes', 'ordinary');
    await wait('the coach answers', () => deliveredTo(THIRD).includes('Coach heard: I walked for ten minutes'));
    await send(THIRD, MODEL_FLAGGED, 'model-flag');
    await wait('the safety message', () => deliveredTo(THIRD).includes(DEFAULT_SAFETY_MESSAGES['en'] ?? '?'));
    expect(coachTurnsAbout(MODEL_FLAGGED)).toBe(0);
    const flagged = (await alerts()).find((alert) => alert.participant_id === third);
    expect(flagged).toMatchObject({ detector: 'model', rule: 'self-harm', status: 'open' });
    await wait('the model-flagged alert e-mailed', () =>
      smtp?.mails.some((mail) => mail.raw.includes(flagged?.id ?? '?')),
    );
    await wait('the model-flagged alert on the webhook', () =>
      alertHook.requests.some((request) => request.body.includes(flagged?.id ?? '?')),
    );
    await wait('the model-flagged alert delivered on every route', async () =>
      (await alerts())
        .find((alert) => alert.id === flagged?.id)
        ?.deliveries.every((delivery) => delivery.status === 'delivered'),
    );

    // Acknowledging and resolving are recorded, with who and the note; bad input changes nothing.
    const id = flagged?.id ?? '';
    expect((await call('POST', `/alerts/${id}/resolve`, {})).status).toBe(400);
    const acknowledged = await call('POST', `/alerts/${id}/acknowledge`, { note: 'Calling them now' });
    expect(acknowledged.status).toBe(200);
    expect((await call('POST', `/alerts/${id}/acknowledge`, {})).status).toBe(409);
    const resolved = await call('POST', `/alerts/${id}/resolve`, { note: 'Spoke with them; they are safe' });
    expect(resolved.status).toBe(200);
    const final = ((await (await call('GET', `/alerts/${id}`)).json()) as { result: AlertView }).result;
    expect(final).toMatchObject({
      status: 'resolved',
      acknowledged_by: 'PROMPTPIPE_API_TOKEN',
      acknowledge_note: 'Calling them now',
      resolved_by: 'PROMPTPIPE_API_TOKEN',
      resolve_note: 'Spoke with them; they are safe',
    });
  });

  it('the coach’s flag_for_staff raises an alert that goes the same way, through a SIGKILL', {
    timeout: 90_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(describeOutput(serverProcess)));
    const wait = <T>(what: string, check: () => T | Promise<T>) => waitFor(what, check, 20_000, [serverProcess]);
    // The webhook is down when the coach flags: the server is SIGKILLed before the alert is delivered.
    alertHook.respond = () => ({ status: 503 });
    const before = alertHook.requests.length;
    await send(THIRD, ASKS_FOR_A_PERSON, 'asks-for-a-person');
    await wait('the coach’s answer', () => deliveredTo(THIRD).includes('I have let the study team know.'));
    const flagged = (await alerts()).find((alert) => alert.detector === 'coach');
    expect(flagged).toMatchObject({ kind: 'staff-flag', rule: 'urgent', status: 'open' });
    await wait('a refused webhook attempt', () =>
      alertHook.requests.slice(before).some((request) => request.body.includes(flagged?.id ?? '?')),
    );
    if (serverProcess) await killServer(serverProcess);
    alertHook.respond = () => ({ status: 200 });
    const afterKill = alertHook.requests.length;
    serverProcess = await startServer(environment());
    // The manual clock starts again at CLOCK_START: past the earlier test's 5 minutes and the retry's back-off.
    expect((await call('POST', '/admin/clock', { advance_ms: 30 * 60_000 })).status).toBe(200);
    await wait('the flag on the webhook after the restart', () =>
      alertHook.requests.slice(afterKill).some((request) => request.body.includes(flagged?.id ?? '?')),
    );
    await wait('the flag delivered on every route', async () =>
      (await alerts())
        .find((alert) => alert.id === flagged?.id)
        ?.deliveries.every((delivery) => delivery.status === 'delivered'),
    );
    expect(JSON.parse(alertHook.requests.at(-1)?.body ?? '{}').alert.reason).toBe('Asks to talk to a person');
  });
});
