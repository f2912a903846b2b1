/** `language` on the participant: enrollment, validation, update, the JSON, and the unregister notice. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiHarness, createApiHarness } from '../support/api-harness.ts';

const PATH = '/conversation/participants';
let harness: ApiHarness;

beforeEach(async () => {
  harness = await createApiHarness();
});
afterEach(async () => {
  await harness.close();
});

describe('language at enrollment', () => {
  it('stores the canonical tag and shows it in the participant JSON', async () => {
    const response = await harness.call('POST', PATH, { phone_number: '+15551230001', language: 'PT-br' });
    expect(response.statusCode).toBe(201);
    expect(response.json().result.language).toBe('pt-BR');
    const id = response.json().result.id as string;
    expect((await harness.call('GET', `${PATH}/${id}`)).json().result.language).toBe('pt-BR');
    expect((await harness.call('GET', PATH)).json().result[0].language).toBe('pt-BR');
    const [event] = await harness.store.events.list({ participantId: id, type: 'participant-enrolled' });
    expect(event?.data).toMatchObject({ language: 'pt-BR' });
  });

  it('defaults to English', async () => {
    const response = await harness.call('POST', PATH, { phone_number: '+15551230001' });
    expect(response.json().result.language).toBe('en');
  });

  it.each([
    ['an unknown language', 'xx'],
    ['a language name instead of a tag', 'Spanish'],
    ['a malformed tag', 'es_ES!'],
    ['an empty tag', ''],
  ])('refuses %s with a 400 naming the field, and enrolls nobody', async (_case, language) => {
    const response = await harness.call('POST', PATH, { phone_number: '+15551230001', language });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ status: 'error', message: expect.stringContaining('language') });
    expect(await harness.store.participants.count()).toBe(0);
  });

  it('refuses a language that is not a string', async () => {
    const response = await harness.call('POST', PATH, { phone_number: '+15551230001', language: 42 });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain('language');
  });
});

describe('language by PUT', () => {
  it('switches the language and records the change', async () => {
    const ada = await harness.enroll();
    const response = await harness.call('PUT', `${PATH}/${ada.id}`, { language: 'es' });
    expect(response.statusCode).toBe(200);
    expect(response.json().result).toMatchObject({ language: 'es', name: 'Ada' });
    expect((await harness.store.participants.get(ada.id))?.language).toBe('es');
    const [event] = await harness.store.events.list({ participantId: ada.id, type: 'participant-updated' });
    expect(event?.data).toMatchObject({ fields: ['language'] });
  });

  it('refuses an unknown tag and changes nothing', async () => {
    const ada = await harness.enroll();
    const response = await harness.call('PUT', `${PATH}/${ada.id}`, { language: 'klingonese', name: 'Eve' });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain('language');
    expect(await harness.store.participants.get(ada.id)).toMatchObject({ language: 'en', name: 'Ada' });
  });
});

describe('the unregister notice', () => {
  it("is sent in the participant's language", async () => {
    const enrolled = await harness.call('POST', PATH, { phone_number: '+15551230001', language: 'es' });
    const id = enrolled.json().result.id as string;
    await harness.call('DELETE', `${PATH}/${id}`);
    const entries = await harness.store.transcript.list(id);
    expect(entries.at(-1)?.content).toBe(
      'Te hemos dado de baja de este estudio y no recibirás más mensajes. ¡Gracias por participar!',
    );
  });
});
