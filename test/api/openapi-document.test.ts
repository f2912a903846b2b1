/**
 * The OpenAPI document is generated from the routes (@fastify/swagger): it is a valid OpenAPI 3.1 document, and every
 * operation the server registers — every channel enabled, the trial, the research and safety routes — is in it with
 * an operationId, except the dashboard's pages and assets (not part of the API).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routesOf } from '../../src/api/auth.ts';
import type { Application } from '../../src/main.ts';
import { startTestApplication } from '../support/test-application.ts';

const TOKEN = 'openapi-test-token';
let app: Application;

beforeAll(async () => {
  app = await startTestApplication(
    {
      PROMPTPIPE_API_TOKEN: TOKEN,
      PROMPTPIPE_CHANNEL: 'webhook,webchat,telegram,whatsapp-cloud,twilio',
      TELEGRAM_BOT_TOKEN: '123456:abcdefghijklmnopqrstuvwxyz0123456789',
      TELEGRAM_WEBHOOK_SECRET: 'webhook-secret_1',
      WHATSAPP_CLOUD_ACCESS_TOKEN: 'token',
      WHATSAPP_CLOUD_PHONE_NUMBER_ID: '123',
      WHATSAPP_CLOUD_APP_SECRET: 'secret',
      WHATSAPP_CLOUD_VERIFY_TOKEN: 'verify',
      WHATSAPP_CLOUD_API_URL: 'http://127.0.0.1:9',
      TWILIO_ACCOUNT_SID: 'AC1',
      TWILIO_AUTH_TOKEN: 'auth',
      TWILIO_FROM: 'whatsapp:+15550001111',
      TWILIO_PUBLIC_URL: 'https://coach.example.org/',
      // Not started: the channels' routes are registered either way, and telegram would call its API at start.
    },
    { start: false },
  );
});
afterAll(async () => {
  await app.server.close();
});

// biome-ignore lint/suspicious/noExplicitAny: a parsed JSON document, read by path.
type Json = any;

async function document(): Promise<Json> {
  const response = await app.server.inject({
    method: 'GET',
    url: '/openapi.json',
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(response.statusCode).toBe(200);
  return response.json();
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const served = await document();
    expect(served.openapi).toBe('3.1.0');
    const result = await new Validator().validate(served);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has every route the server registers, each with a unique operationId, and no dashboard page', async () => {
    const served = await document();
    const operations = new Map<string, string | undefined>();
    for (const [path, item] of Object.entries(served.paths as Record<string, Record<string, Json>>)) {
      for (const [method, operation] of Object.entries(item)) {
        if (method !== 'parameters') operations.set(`${method.toUpperCase()} ${path}`, operation.operationId);
      }
    }
    const registered = routesOf(app.server)
      .filter((route) => route.method !== 'HEAD')
      .filter((route) => !route.url.startsWith('/dashboard') && route.url !== '/favicon.ico')
      .map((route) => `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`);
    // The channels, the trial, research and safety: the whole server, not a corner of it.
    expect(registered).toEqual(
      expect.arrayContaining([
        'POST /channels/webhook/messages',
        'POST /chat/{token}/messages',
        'GET /alerts',
        'POST /conversation/participants/import',
        'GET /export/{file}',
      ]),
    );
    const missing = registered.filter((route) => !operations.has(route));
    expect(missing).toEqual([]);
    const withoutId = registered.filter((route) => !operations.get(route));
    expect(withoutId).toEqual([]);
    const ids = [...operations.values()];
    expect(new Set(ids).size).toBe(ids.length);
    expect([...operations.keys()].filter((route) => route.includes('/dashboard'))).toEqual([]);
  });

  it('says who may call each operation, from the route declarations', async () => {
    const served = await document();
    expect(served.paths['/health'].get.security).toEqual([{}]);
    expect(served.paths['/stats'].get.security).toEqual([{ bearerAuth: [] }, { dashboardSession: [] }]);
    expect(served.paths['/conversation/participants'].get.security).toBeUndefined();
    expect(served.security).toEqual([{ bearerAuth: [] }]);
  });
});
