/**
 * `chat_url`, a web-chat participant's private link, wherever the API returns participants: enrolment, one
 * participant, the list, an update and the bulk import's enrolled rows. Absolute with `PROMPTPIPE_PUBLIC_URL` (a link
 * an organiser can send as it is), the path on this server without it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { startTestApplication } from '../support/test-application.ts';

const TOKEN = 'chat-url-token';
const auth = { authorization: `Bearer ${TOKEN}` };
const TOKEN_PATH = '/chat/[A-Za-z0-9_-]{43}';

let app: Application | undefined;

function startApp(environment: Record<string, string>): Promise<Application> {
  return startTestApplication({ PROMPTPIPE_API_TOKEN: TOKEN, PROMPTPIPE_CHANNEL: 'webchat,webhook', ...environment });
}

afterEach(async () => {
  await app?.stop();
  app = undefined;
});

// biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
type Json = any;

async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, type?: string): Promise<Json> {
  const response = await app?.server.inject({
    method,
    url,
    headers: { ...auth, ...(type ? { 'content-type': type } : {}) },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });
  expect(response?.statusCode, response?.body).toBeLessThan(300);
  return response?.json().result;
}

/** Every place a participant's link appears, for one web-chat participant (Ada) and one on the webhook (Bob). */
async function linksEverywhere(): Promise<{ enrolled: string; others: (string | undefined)[]; imported: Json[] }> {
  const ada = await call('POST', '/conversation/participants', { phone_number: '+15551230091', channel: 'webchat' });
  const bob = await call('POST', '/conversation/participants', { phone_number: '+15551230092', channel: 'webhook' });
  expect(bob.chat_url).toBeUndefined();
  const one = await call('GET', `/conversation/participants/${ada.id}`);
  const list: Json[] = await call('GET', '/conversation/participants');
  const updated = await call('PUT', `/conversation/participants/${ada.id}`, { name: 'Ada' });
  expect(list.find((participant) => participant.id === bob.id)?.chat_url).toBeUndefined();
  const imported = await call(
    'POST',
    '/conversation/participants/import',
    'phone_number,channel\n+15551230093,webchat\n+15551230094,webhook\n',
    'text/csv',
  );
  return {
    enrolled: ada.chat_url,
    others: [one.chat_url, list.find((participant) => participant.id === ada.id)?.chat_url, updated.chat_url],
    imported: imported.enrolled,
  };
}

describe('chat_url', () => {
  it('is absolute with PROMPTPIPE_PUBLIC_URL, the same link everywhere, and opens the chat page', async () => {
    app = await startApp({ PROMPTPIPE_PUBLIC_URL: 'https://coach.example.org/study/' });
    const { enrolled, others, imported } = await linksEverywhere();
    expect(enrolled).toMatch(new RegExp(`^https://coach\\.example\\.org/study${TOKEN_PATH}$`));
    expect(others).toEqual([enrolled, enrolled, enrolled]);
    expect(imported).toEqual([
      expect.objectContaining({
        row: 1,
        chat_url: expect.stringMatching(/^https:\/\/coach\.example\.org\/study\/chat\//),
      }),
      expect.not.objectContaining({ chat_url: expect.anything() }),
    ]);
    const importedId = imported[0].participant_id as string;
    expect((await call('GET', `/conversation/participants/${importedId}`)).chat_url).toBe(imported[0].chat_url);
    // The proxy in front strips /study: this server answers the link's /chat/<token> path.
    const page = await app.server.inject({ method: 'GET', url: new URL(enrolled).pathname.replace(/^\/study/, '') });
    expect(page.statusCode).toBe(200);
  });

  it('is the path on this server without PROMPTPIPE_PUBLIC_URL, in the list and the import too', async () => {
    app = await startApp({});
    const { enrolled, others, imported } = await linksEverywhere();
    expect(enrolled).toMatch(new RegExp(`^${TOKEN_PATH}$`));
    expect(others).toEqual([enrolled, enrolled, enrolled]);
    expect(imported[0]).toMatchObject({ row: 1, chat_url: expect.stringMatching(new RegExp(`^${TOKEN_PATH}$`)) });
    expect(imported[1].chat_url).toBeUndefined();
  });

  it('is in the OpenAPI Participant schema and the import results', async () => {
    app = await startApp({});
    const document = (await app.server.inject({ method: 'GET', url: '/openapi.json', headers: auth })).json();
    expect(document.components.schemas.Participant.properties.chat_url).toMatchObject({ type: 'string' });
    const importPath = document.paths['/conversation/participants/import'].post;
    const result = importPath.responses['200'].content['application/json'].schema.properties.result;
    expect(result.properties.enrolled.items.properties.chat_url).toMatchObject({ type: 'string' });
  });
});
