/**
 * The real `promptpipe serve` at LOG_LEVEL=debug with every kind of credential configured (API token, a web-chat
 * participant, WhatsApp Cloud with a verify token), asked the requests that used to copy a credential into the request
 * log: the chat page and its messages (the token is the path), Meta's `hub.verify_token` handshake, `?token=` and
 * `?access_token=`, an Authorization header; and a webhook gateway URL with a password and a key, which it prints at
 * start-up. Its whole output is then searched for every credential, which must be
 * absent, and for `[redacted]` where each one was.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import {
  assertNoSecretsInOutput,
  credentialsIn,
  type ServerProcess,
  startServer,
  stopServer,
} from '../support/server-process.ts';

const API_TOKEN = 'e2e-logging-api-token-4711';
const ACCESS_TOKEN = 'EAAG-logging-access-token';
const APP_SECRET = 'logging-app-secret-0815';
const VERIFY_TOKEN = 'meta-verify-token-1234';
const WEBHOOK = '/channels/whatsapp-cloud/webhook';
/** A gateway URL with credentials of its own, which the server prints at start-up. */
const GATEWAY_PASSWORD = 'gateway-password-99';
const GATEWAY_KEY = 'gateway-url-key-77';

let stateDir = '';
let model: ScriptedOpenAiServer | undefined;
let server: ServerProcess | undefined;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-credential-logging-'));
  model = await startScriptedOpenAiServer({ respond: () => ({ content: 'Hi! Which habit would you like to build?' }) });
  server = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    LOG_LEVEL: 'debug',
    PROMPTPIPE_CHANNEL: 'webchat,whatsapp-cloud,webhook',
    PROMPTPIPE_WEBHOOK_URL: `http://gateway:${GATEWAY_PASSWORD}@127.0.0.1:9/in?key=${GATEWAY_KEY}`,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    WHATSAPP_CLOUD_ACCESS_TOKEN: ACCESS_TOKEN,
    WHATSAPP_CLOUD_PHONE_NUMBER_ID: '1098765432',
    WHATSAPP_CLOUD_APP_SECRET: APP_SECRET,
    WHATSAPP_CLOUD_VERIFY_TOKEN: VERIFY_TOKEN,
    // Nothing is sent to WhatsApp here; should something be, it must not leave the machine.
    WHATSAPP_CLOUD_API_URL: 'http://127.0.0.1:9',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
  });
}, 60_000);

afterAll(async () => {
  if (server) await stopServer(server, 10_000);
  await model?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

/** The `req.url` of every request line the server logged. */
function loggedUrls(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      const request = (JSON.parse(line) as { req?: { url?: string } }).req;
      return request?.url === undefined ? [] : [request.url];
    });
}

describe('credentials in the request log', () => {
  it('never appear in the output; [redacted] stands where they were', { timeout: 60_000 }, async () => {
    const running = server as ServerProcess;
    const base = running.baseUrl;
    const enrolled = await fetch(`${base}/conversation/participants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: '+15551230088', name: 'Ada', channel: 'webchat' }),
    });
    expect(enrolled.status, await enrolled.clone().text()).toBe(201);
    const chatPath = ((await enrolled.json()) as { result: { chat_url: string } }).result.chat_url;
    const chatToken = chatPath.replace('/chat/', '');
    expect(chatToken.length).toBeGreaterThan(30);

    expect((await fetch(`${base}${chatPath}`)).status).toBe(200);
    const sent = await fetch(`${base}${chatPath}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'I want to walk more' }),
    });
    expect(sent.status).toBe(202);
    // Not a route (the path is case-sensitive), but its request line is logged all the same.
    expect((await fetch(`${base}/CHAT/${chatToken}`)).status).not.toBe(200);
    const handshake = await fetch(
      `${base}${WEBHOOK}?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=42`,
    );
    expect(await handshake.text()).toBe('42');
    expect((await fetch(`${base}${WEBHOOK}?hub.mode=subscribe&hub.verify_token=${APP_SECRET}`)).status).toBe(403);
    expect((await fetch(`${base}/conversation/participants?token=${API_TOKEN}`)).status).toBe(401);
    expect((await fetch(`${base}/health?access_token=${ACCESS_TOKEN}`)).status).toBe(200);

    running.child.kill('SIGTERM');
    await running.exit;
    const output = running.output.join('');
    for (const credential of [
      API_TOKEN,
      ACCESS_TOKEN,
      APP_SECRET,
      VERIFY_TOKEN,
      chatToken,
      GATEWAY_PASSWORD,
      GATEWAY_KEY,
    ]) {
      expect(output).not.toContain(credential);
    }
    expect(output).toContain('delivering to http://gateway:[redacted]@127.0.0.1:9/in?key=[redacted]');
    expect(loggedUrls(output)).toEqual(
      expect.arrayContaining([
        '/chat/[redacted]',
        '/chat/[redacted]/messages',
        '/CHAT/[redacted]',
        `${WEBHOOK}?[redacted]`,
        '/conversation/participants?token=[redacted]',
        '/health?access_token=[redacted]',
      ]),
    );
    expect(() => assertNoSecretsInOutput(running)).not.toThrow();
  });
});

describe('the check every stopped test server goes through', () => {
  it('finds the credentials of the environment, not other settings or short values', () => {
    expect(
      credentialsIn({
        PROMPTPIPE_API_TOKEN: API_TOKEN,
        TWILIO_AUTH_TOKEN: 'twilio-auth-token',
        EXPORT_PSEUDONYM_KEY: 'pseudonym-key-123',
        WHATSAPP_CLOUD_VERIFY_TOKEN: 'verify',
        LLM_MAX_TOKENS: '51200000',
        OPT_OUT_KEYWORDS: 'STOP,UNSUBSCRIBE',
        DATABASE_URL: 'postgres://promptpipe:database-password@127.0.0.1:5432/study',
        PATH: '/usr/bin',
      }),
    ).toEqual(
      new Map([
        ['PROMPTPIPE_API_TOKEN', API_TOKEN],
        ['TWILIO_AUTH_TOKEN', 'twilio-auth-token'],
        ['EXPORT_PSEUDONYM_KEY', 'pseudonym-key-123'],
        ['DATABASE_URL (password)', 'database-password'],
      ]),
    );
  });

  it('fails naming the setting and the line, without printing the value', () => {
    const leaky = {
      env: { PROMPTPIPE_API_TOKEN: API_TOKEN },
      output: ['{"msg":"started"}\n', `{"msg":"request","url":"/x?t=${API_TOKEN}"}\n`],
    };
    expect(() => assertNoSecretsInOutput(leaky)).toThrow(
      'PROMPTPIPE_API_TOKEN appears in 1 line(s):\n{"msg":"request","url":"/x?t=<PROMPTPIPE_API_TOKEN>"}',
    );
    expect(() => assertNoSecretsInOutput(leaky)).not.toThrow(API_TOKEN);
  });
});
