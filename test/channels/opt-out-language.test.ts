/** STOP and START confirmations in the participant's language, wired as in production. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBuiltInMessageCatalogue } from '../../src/i18n/built-in-catalogues.ts';
import type { Application } from '../../src/main.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

const PHONE = '+15551230001';
const messages = createBuiltInMessageCatalogue();
let gateway: HttpReceiver;
let app: Application;

beforeEach(async () => {
  gateway = await startHttpReceiver();
  app = await startTestApplication({ PROMPTPIPE_WEBHOOK_URL: gateway.url });
});
afterEach(async () => {
  await app.stop();
  await gateway.close();
});

const texts = (): string[] => gateway.requests.map((request) => JSON.parse(request.body).text as string);

async function say(text: string, id: string): Promise<void> {
  await app.server.inject({ method: 'POST', url: '/channels/webhook/messages', payload: { from: PHONE, text, id } });
  await app.inbound.idle();
}

describe('opt-out in the participant language', () => {
  it('confirms STOP and START in Spanish', async () => {
    const enrolled = await app.server.inject({
      method: 'POST',
      url: '/conversation/participants',
      payload: { phone_number: PHONE, language: 'es' },
    });
    expect(enrolled.statusCode).toBe(201);
    const optOut = messages.t('es', 'notice.optOut');
    const optIn = messages.t('es', 'notice.optIn');
    expect(optOut).toMatch(/^Te has dado de baja/);

    await say('STOP', 'gw-stop');
    await waitUntil('the Spanish confirmation', () => texts().includes(optOut));
    await say('START', 'gw-start');
    await waitUntil('the Spanish welcome back', () => texts().includes(optIn));
    expect(texts()).not.toContain(messages.t('en', 'notice.optOut'));
  });
});
