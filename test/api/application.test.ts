/**
 * The composition root wired for real, in process: the OpenAI-compatible adapter against the scripted HTTP model
 * server, the webhook channel against a local HTTP gateway, a manual clock, SQLite in memory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signatureHeaders, verifySignature } from '../../src/http/webhook-signature.ts';
import type { Application } from '../../src/main.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

const SECRET = 'gateway-secret';
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let app: Application;

const eventually = (check: () => boolean, what: string) => waitUntil(what, check);

function startApp(environment: Record<string, string>): Promise<Application> {
  return startTestApplication({
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    PROMPTPIPE_WEBHOOK_SECRET: SECRET,
    ...environment,
  });
}

beforeEach(async () => {
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({
    respond: (request) =>
      request.lastMessage?.content?.includes('expecting a greeting')
        ? { content: 'Hi Ada! Which habit shall we build together?' }
        : { content: `You said "${request.lastMessage?.content}".` },
  });
});
afterEach(async () => {
  await app.stop();
  await model.close();
  await gateway.close();
});

describe('the wired application', () => {
  it('enrolls over HTTP, greets through the model, and delivers signed messages to the gateway', async () => {
    app = await startApp({ OPENAI_BASE_URL: model.baseUrl });
    const enrolled = await app.server.inject({
      method: 'POST',
      url: '/conversation/participants',
      payload: { phone_number: '+15551230001', name: 'Ada', timezone: 'America/New_York' },
    });
    expect(enrolled.statusCode).toBe(201);
    const participantId = enrolled.json().result.id as string;
    await eventually(() => gateway.requests.length === 1, 'the greeting delivery');
    const [greeting] = gateway.requests;
    expect(JSON.parse(greeting?.body ?? '')).toMatchObject({
      participant_id: participantId,
      to: '+15551230001',
      kind: 'text',
      text: 'Hi Ada! Which habit shall we build together?',
    });
    // Signed at the real time of sending (the manual study clock is in March), over `<timestamp>.<body>`.
    const signedAt = greeting?.headers['x-promptpipe-timestamp'] as string;
    expect(Math.abs(Number(signedAt) * 1000 - Date.now())).toBeLessThan(5 * 60_000);
    const signature = greeting?.headers['x-promptpipe-signature'] as string;
    expect(verifySignature(SECRET, greeting?.body ?? '', signature, signedAt)).toBe(true);

    const body = JSON.stringify({ from: '+15551230001', text: 'I want to walk more', id: 'gw-1' });
    const inbound = await app.server.inject({
      method: 'POST',
      url: '/channels/webhook/messages',
      headers: { 'content-type': 'application/json', ...signatureHeaders(SECRET, body, new Date()) },
      payload: body,
    });
    expect(inbound.statusCode).toBe(202);
    await eventually(() => gateway.requests.length === 2, 'the reply delivery');
    expect(JSON.parse(gateway.requests[1]?.body ?? '').text).toBe('You said "I want to walk more".');

    // The gateway has the reply; the server counts the delivery only once the gateway's answer is back: wait for it.
    await expect
      .poll(
        async () =>
          (await app.server.inject({ url: `/conversation/participants/${participantId}/history` }))
            .json()
            .result.map((entry: { role: string }) => entry.role),
        { timeout: 10_000 },
      )
      .toEqual(['assistant', 'user', 'assistant']);
    const metricsText = async () => (await app.server.inject({ url: '/metrics' })).body;
    await expect
      .poll(metricsText, { timeout: 10_000 })
      .toContain('promptpipe_outbound_messages_total{channel="webhook",outcome="delivered"} 2');
    const metrics = await metricsText();
    expect(metrics).toContain('promptpipe_llm_calls_total{purpose="intake",model="gpt-4o-mini",outcome="success"} 2');
    expect(metrics).toContain('promptpipe_inbound_messages_total{channel="webhook"} 1');
  });

  it('without an LLM, still enrolls and answers with the "assistant unavailable" fallback', async () => {
    app = await startApp({});
    const enrolled = await app.server.inject({
      method: 'POST',
      url: '/conversation/participants',
      payload: { phone_number: '+15551230002' },
    });
    expect(enrolled.statusCode).toBe(201);
    await eventually(() => gateway.requests.length === 1, 'the fallback delivery');
    expect(JSON.parse(gateway.requests[0]?.body ?? '').text).toContain('assistant is unavailable');
    expect(model.requests).toEqual([]);
    // /health tells the truth: there is no model, which is not "ok".
    const health = (await app.server.inject({ url: '/health' })).json();
    expect(health).toMatchObject({ status: 'healthy', llm: { status: 'not_configured' } });
  });

  it('reports a configured model that has not failed as ok on /health', async () => {
    app = await startApp({ OPENAI_BASE_URL: model.baseUrl });
    expect((await app.server.inject({ url: '/health' })).json()).toMatchObject({ llm: { status: 'ok' } });
  });

  it('advances the manual clock over HTTP', async () => {
    app = await startApp({ OPENAI_BASE_URL: model.baseUrl });
    const advanced = await app.server.inject({
      method: 'POST',
      url: '/admin/clock',
      payload: { advance_ms: 3_600_000 },
    });
    expect(advanced.json().result.now).toBe('2026-03-02T15:00:00.000Z');
  });
});
