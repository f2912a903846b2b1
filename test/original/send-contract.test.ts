/**
 * `POST /send` against the original PromptPipe's docs/api.md: the request is its `Prompt`, a success is
 * `200 {"status":"ok","message":"Message sent successfully"}`, an invalid request `400 {"status":"error",…}`.
 * Each prompt type is sent through the participant's channel and recorded like an organiser message.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/wait-until.ts';
import { type OriginalApp, startOriginalApp } from './original-app.ts';

let original: OriginalApp;

beforeEach(async () => {
  original = await startOriginalApp();
});
afterEach(async () => {
  await original.close();
});

async function participantByPhone(phone: string) {
  return original.app.store.participants.getByPhone(phone);
}

describe('POST /send (the original API)', () => {
  it('sends a static prompt to a new digits-only number: enrolled in E.164, recorded as an organiser message', async () => {
    const answer = await original.call('POST', '/send', { to: '15551234567', type: 'static', body: 'Hello!' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'ok', message: 'Message sent successfully' });

    const participant = await participantByPhone('+15551234567');
    expect(participant?.status).toBe('active');
    const [delivery] = await original.waitForDeliveries(1);
    expect(delivery).toMatchObject({ to: '+15551234567', kind: 'text', text: 'Hello!' });
    const transcript = await original.app.store.transcript.list(participant?.id ?? '');
    expect(transcript).toEqual([expect.objectContaining({ role: 'assistant', kind: 'organiser', content: 'Hello!' })]);
    // Enrolled without the greeting: the only message is the one sent.
    expect(original.model.requests).toHaveLength(0);
  });

  it('defaults the type to static and reads an international number written without its +', async () => {
    const answer = await original.call('POST', '/send', { to: '447911123456', body: 'Hi from London' });
    expect(answer.status).toBe(200);
    expect(await participantByPhone('+447911123456')).toBeDefined();
  });

  it('sends a genai prompt: the system and user prompts go to the model, its answer to the participant', async () => {
    const answer = await original.call('POST', '/send', {
      to: '+15551230001',
      type: 'genai',
      system_prompt: 'You are brief.',
      user_prompt: 'Say hello',
    });
    expect(answer.status).toBe(200);
    const [request] = original.model.requests;
    expect(request?.body.messages).toEqual([
      { role: 'system', content: 'You are brief.' },
      { role: 'user', content: 'Say hello' },
    ]);
    const [delivery] = await original.waitForDeliveries(1);
    expect(delivery).toMatchObject({ kind: 'text', text: 'model answer to: Say hello' });
  });

  it('sends a branch prompt as numbered options; the reply is recorded as the branch chosen', async () => {
    const answer = await original.call('POST', '/send', {
      to: '+15551230002',
      type: 'branch',
      body: 'Choose an option:',
      branch_options: [
        { label: 'Walk', body: 'A short walk' },
        { label: 'Stretch', body: 'Five minutes of stretching' },
      ],
    });
    expect(answer.status).toBe(200);
    const [poll] = await original.waitForDeliveries(1);
    expect(poll).toMatchObject({ kind: 'poll', poll: { question: 'Choose an option:', options: ['Walk', 'Stretch'] } });

    const participant = await participantByPhone('+15551230002');
    const reply = await original.call('POST', '/channels/webhook/messages', { from: '+15551230002', text: '2' });
    expect(reply.status).toBe(202);
    // The choice is what the coach reads (the transcript) and what GET /responses shows.
    await waitUntil('the reply in the transcript', async () => {
      const transcript = await original.app.store.transcript.list(participant?.id ?? '');
      return transcript.some((entry) => entry.role === 'user' && entry.content.includes('Stretch'));
    });
    const responses = await original.call('GET', '/responses?from=15551230002');
    expect(responses.body['result']).toEqual([
      expect.objectContaining({ body: '2', choice: { question: 'Choose an option:', option: 'Stretch' } }),
    ]);
  });

  it('sends a custom prompt as its body', async () => {
    const answer = await original.call('POST', '/send', {
      to: '+15551230003',
      type: 'custom',
      body: 'Custom',
      state: 'initial',
    });
    expect(answer.status).toBe(200);
    const [delivery] = await original.waitForDeliveries(1);
    expect(delivery).toMatchObject({ text: 'Custom' });
  });

  it('reaches an enrolled participant on their own channel and adds to their working history', async () => {
    const enrolled = await original.app.participants.enroll({ phoneNumber: '+15551230004' }, { greet: false });
    await original.call('POST', '/send', { to: '1 555 123 0004', body: 'Organiser note' });
    await original.waitForDeliveries(1);
    const state = await original.app.participants.state(enrolled.id);
    expect(state.data.conversationHistory).toContain('Organiser note');
  });

  it.each([
    ['no recipient', { type: 'static', body: 'x' }, /to is required/],
    ['a recipient that is no phone number', { to: 'invalid-phone', body: 'x' }, /international form.*\+447911123456/],
    ['an empty static body', { to: '15551234567', type: 'static', body: '' }, /body is required/],
    ['an unknown type', { to: '15551234567', type: 'invalid_type', body: 'x' }, /invalid prompt type/],
    ['genai without a system prompt', { to: '15551234567', type: 'genai', user_prompt: 'x' }, /system_prompt/],
    ['genai without a user prompt', { to: '15551234567', type: 'genai', system_prompt: 'x' }, /user_prompt/],
    [
      'a branch with one option',
      { to: '15551234567', type: 'branch', branch_options: [{ label: 'a', body: 'b' }] },
      /at least 2/,
    ],
    ['a body that is not a string', { to: '15551234567', body: 42 }, /body: must be a string/],
  ])('refuses %s with 400 and the error envelope, enrolling nobody', async (_case, body, message) => {
    const answer = await original.call('POST', '/send', body);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ status: 'error', message: expect.stringMatching(message) });
    expect(await original.app.store.participants.count()).toBe(0);
  });

  it('refuses malformed JSON (400), another method (405) and a missing token (401)', async () => {
    expect((await original.call('POST', '/send', '{"invalid": json}')).status).toBe(400);
    const get = await original.call('GET', '/send');
    expect(get.status).toBe(405);
    expect((await original.call('POST', '/send', { to: '15551234567', body: 'x' }, null)).status).toBe(401);
  });

  it('answers 500 when the model cannot generate a genai prompt, and sends nothing', async () => {
    original.model.respond = () => ({ status: 500, error: 'model down' });
    const answer = await original.call('POST', '/send', {
      to: '+15551230005',
      type: 'genai',
      system_prompt: 's',
      user_prompt: 'u',
    });
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ status: 'error', message: expect.stringContaining('Failed to generate') });
    expect(await original.app.store.participants.count()).toBe(0);
  });

  it('never writes to a participant who withdrew', async () => {
    const enrolled = await original.app.participants.enroll({ phoneNumber: '+15551230006' }, { greet: false });
    await original.app.participants.update(enrolled.id, { status: 'withdrawn' });
    const answer = await original.call('POST', '/send', { to: '+15551230006', body: 'Still there?' });
    expect(answer.status).toBe(409);
    expect(await original.app.store.transcript.list(enrolled.id)).toEqual([]);
  });
});
