/**
 * Credentials stay out of the log: the URL rules one by one, the process logger end to end (every line still JSON),
 * and the API server's request log even with a logger that redacts nothing itself.
 */
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createApiServer } from '../../src/api/api-server.ts';
import { TWILIO_STATUS_PATH } from '../../src/channels/twilio/twilio-channel.ts';
import { TWILIO_MESSAGES_PATH } from '../../src/channels/twilio/twilio-webhook-route.ts';
import { WEBHOOK_INBOUND_PATH } from '../../src/channels/webhook/webhook-inbound-route.ts';
import { WHATSAPP_CLOUD_WEBHOOK_PATH } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-webhook-route.ts';
import { createLogger, silentLog } from '../../src/observability/log.ts';
import { REDACTED, redactHeaders, redactText, redactUrl } from '../../src/observability/log-redaction.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { ParticipantService } from '../../src/participants/participant-service.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { CHAT_PATH_PREFIX } from '../../src/web/web-chat-links.ts';

const CHAT_TOKEN = 'Zm9vYmFyLWNoYXQtdG9rZW4tdGhhdC1pcy1sb25n';

function lines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('redactUrl', () => {
  it.each([
    [`/chat/${CHAT_TOKEN}`, `/chat/${REDACTED}`],
    [`/chat/${CHAT_TOKEN}/live?after=12`, `/chat/${REDACTED}/live?after=12`],
    [`/chat/${CHAT_TOKEN}/messages`, `/chat/${REDACTED}/messages`],
    [`/CHAT/${CHAT_TOKEN}`, `/CHAT/${REDACTED}`],
    [`//chat//${CHAT_TOKEN}`, `//chat//${REDACTED}`],
    [`https://coach.example.org/chat/${CHAT_TOKEN}?x=1`, `https://coach.example.org/chat/${REDACTED}?x=1`],
    ['/health?token=api-secret-1', `/health?token=${REDACTED}`],
    [
      '/export/messages.csv?since=2026-03-01&access_token=a1&participant=p1&api_key=k&password=p&code=c&signature=s',
      `/export/messages.csv?since=2026-03-01&access_token=${REDACTED}&participant=p1&api_key=${REDACTED}` +
        `&password=${REDACTED}&code=${REDACTED}&signature=${REDACTED}`,
    ],
    [
      '/x?hub.verify_token=v&hub%2Everify%5Ftoken=w',
      `/x?hub.verify_token=${REDACTED}&hub%2Everify%5Ftoken=${REDACTED}`,
    ],
    ['https://gateway:hunter2-password@hooks.example.org/in', `https://gateway:${REDACTED}@hooks.example.org/in`],
    ['/conversation/participants?limit=5', '/conversation/participants?limit=5'],
    ['/dashboard', '/dashboard'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it("hides a provider webhook's whole query string, whatever its parameters are called", () => {
    expect(
      redactUrl(`${WHATSAPP_CLOUD_WEBHOOK_PATH}?hub.mode=subscribe&hub.verify_token=meta-verify&hub.challenge=42`),
    ).toBe(`${WHATSAPP_CLOUD_WEBHOOK_PATH}?${REDACTED}`);
  });

  it('knows the paths the channels really use (the rules are written against them)', () => {
    expect(redactUrl(`${CHAT_PATH_PREFIX}${CHAT_TOKEN}`)).toBe(`${CHAT_PATH_PREFIX}${REDACTED}`);
    for (const path of [WEBHOOK_INBOUND_PATH, TWILIO_MESSAGES_PATH, TWILIO_STATUS_PATH, WHATSAPP_CLOUD_WEBHOOK_PATH]) {
      expect(redactUrl(`${path}?anything=value`), path).toBe(`${path}?${REDACTED}`);
    }
  });
});

describe('redactText and redactHeaders', () => {
  it('redacts URLs quoted in text, and leaves other chat paths alone', () => {
    expect(redactText(`Route GET:/chat/${CHAT_TOKEN} not found`)).toBe(`Route GET:/chat/${REDACTED} not found`);
    expect(redactText('calling https://api.openai.com/v1/chat/completions')).toBe(
      'calling https://api.openai.com/v1/chat/completions',
    );
    expect(redactText('GET /x?token=abc&page=2 failed')).toBe(`GET /x?token=${REDACTED}&page=2 failed`);
  });

  it('keeps a JSON line valid when the URL sits between escaped quotes', () => {
    const line = JSON.stringify({ msg: `Reply was already sent in the "/chat/${CHAT_TOKEN}" route` });
    const redacted = redactText(line);
    expect(JSON.parse(redacted)).toEqual({ msg: `Reply was already sent in the "/chat/${REDACTED}" route` });
  });

  it('replaces the values of credential headers', () => {
    expect(
      redactHeaders({
        authorization: 'Bearer t',
        cookie: 'promptpipe_session=s',
        'x-hub-signature-256': 'sha256=abc',
        'x-twilio-signature': 'xyz',
        'x-api-key': 'k',
        'content-type': 'application/json',
      }),
    ).toEqual({
      authorization: REDACTED,
      cookie: REDACTED,
      'x-hub-signature-256': REDACTED,
      'x-twilio-signature': REDACTED,
      'x-api-key': REDACTED,
      'content-type': 'application/json',
    });
  });
});

describe('the process logger', () => {
  it('redacts requests, URLs, headers, messages and stacks, and every line stays JSON', () => {
    const stream = new PassThrough();
    let written = '';
    stream.on('data', (chunk) => {
      written += String(chunk);
    });
    const log = createLogger({ level: 'debug', destination: stream });
    log.info(
      { req: { method: 'GET', url: `/chat/${CHAT_TOKEN}`, headers: { authorization: 'Bearer api-secret-1' } } },
      'incoming request',
    );
    log.error({ url: '/health?token=api-secret-2' }, 'request failed');
    log.debug({ headers: { cookie: 'session=api-secret-3' } }, 'headers');
    log.warn({}, `Route GET:/chat/${CHAT_TOKEN}/live not found`);
    log.error({ err: new Error(`failed at /x?hub.verify_token=api-secret-4`) }, 'boom');
    log.info({ path: `/chat/${CHAT_TOKEN}` }, 'a field no serializer knows');

    const parsed = lines(written);
    expect(parsed).toHaveLength(6);
    for (const secret of [CHAT_TOKEN, 'api-secret-1', 'api-secret-2', 'api-secret-3', 'api-secret-4']) {
      expect(written).not.toContain(secret);
    }
    expect(parsed[0]?.req).toEqual({ method: 'GET', url: `/chat/${REDACTED}` });
    expect(parsed[1]?.url).toBe(`/health?token=${REDACTED}`);
    expect(parsed[3]?.msg).toBe(`Route GET:/chat/${REDACTED}/live not found`);
  });
});

describe("the API server's request log", () => {
  it('redacts the URL of every request line, with a plain pino logger too', async () => {
    const stream = new PassThrough();
    let written = '';
    stream.on('data', (chunk) => {
      written += String(chunk);
    });
    const store = await createSqliteStore({ filename: ':memory:' });
    const routes: FastifyPluginAsync = async (app) => {
      app.get('/chat/:token', { config: { public: true } }, async () => 'chat');
      app.get(WHATSAPP_CLOUD_WEBHOOK_PATH, { config: { public: true } }, async () => 'challenge');
      app.get('/boom', { config: { public: true } }, async () => {
        throw new Error('kaput');
      });
    };
    const app = createApiServer({
      config: { api: { host: '127.0.0.1', token: undefined, bodyLimitBytes: 1_000_000 } },
      store,
      participants: {} as ParticipantService,
      clock: createManualClock(new Date('2026-03-02T14:00:00Z')),
      channelRoutes: [routes],
      metrics: createMetrics({ jobs: store.jobs }),
      log: silentLog,
      httpLogger: pino({ level: 'debug' }, stream),
    });
    try {
      for (const url of [
        `/chat/${CHAT_TOKEN}`,
        `${WHATSAPP_CLOUD_WEBHOOK_PATH}?hub.mode=subscribe&hub.verify_token=meta-verify-secret&hub.challenge=1`,
        '/health?token=query-api-secret',
        `/CHAT/${CHAT_TOKEN}`,
        '/boom?access_token=boom-secret',
      ]) {
        await app.inject({ method: 'GET', url, headers: { authorization: 'Bearer header-api-secret' } });
      }
    } finally {
      await app.close();
      await store.close();
    }
    const urls = lines(written).flatMap((line) => {
      const request = line.req as { url?: string } | undefined;
      return request?.url ? [request.url] : [];
    });
    expect(urls).toEqual([
      `/chat/${REDACTED}`,
      `${WHATSAPP_CLOUD_WEBHOOK_PATH}?${REDACTED}`,
      `/health?token=${REDACTED}`,
      `/CHAT/${REDACTED}`,
      `/boom?access_token=${REDACTED}`,
    ]);
    for (const secret of [CHAT_TOKEN, 'meta-verify-secret', 'query-api-secret', 'header-api-secret', 'boom-secret']) {
      expect(written).not.toContain(secret);
    }
  });
});
