import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { promptVersion } from '../../src/research/provenance/prompt-version.ts';
import { createProvenanceLlm, providerHostOf } from '../../src/research/provenance/provenance-llm.ts';
import { CONFIGURATION_RECORDED_EVENT } from '../../src/research/provenance/startup-record.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startStudyApp } from './study-fixture.ts';

const SECRET_KEY = 'sk-very-secret-key';
const TOKEN = 'api-token-secret';

describe('provenance of every reply', () => {
  let started: Awaited<ReturnType<typeof startStudyApp>>;
  beforeAll(async () => {
    started = await startStudyApp({
      OPENAI_API_KEY: SECRET_KEY,
      PROMPTPIPE_API_TOKEN: TOKEN,
      EXPORT_PSEUDONYM_KEY: 'pseudo-secret',
      GENAI_TEMPERATURE: '0.3',
    });
  });
  afterAll(async () => {
    await started.app.stop();
    await started.model.close();
  });

  it('shows the LLM call behind each assistant entry in the history', async () => {
    const headers = { authorization: `Bearer ${TOKEN}` };
    const enrolled = await started.app.server.inject({
      method: 'POST',
      url: '/conversation/participants',
      headers,
      payload: { phone_number: '+15550300001', name: 'Ada' },
    });
    const id = enrolled.json().result.id;
    const history = (
      await started.app.server.inject({ method: 'GET', url: `/conversation/participants/${id}/history`, headers })
    ).json().result;
    const greeting = history.find((entry: { kind: string }) => entry.kind === 'reply');
    // Every system message of the request, as sent (the prompt file plus the participant's context).
    const sentSystem = (started.model.requests[0]?.body.messages ?? [])
      .filter((message) => message.role === 'system')
      .map((message) => message.content ?? '')
      .join('\n');
    expect(greeting.provenance).toMatchObject({
      llm_call_id: greeting.llm_call_id,
      purpose: 'intake',
      model: expect.any(String),
      provider_host: new URL(started.model.baseUrl).host,
      temperature: 0.3,
      prompt_file: 'intake.txt',
      prompt_version: promptVersion(sentSystem),
      latency_ms: expect.any(Number),
      outcome: 'success',
    });
    expect(greeting.provenance).toHaveProperty('prompt_tokens');
    expect(greeting.provenance).toHaveProperty('completion_tokens');
    expect(greeting.model).toBe(greeting.provenance.model);
    const [call] = await started.app.store.llmCalls.getMany([greeting.llm_call_id]);
    expect(call?.participantId).toBe(id);
  });

  it('records the effective configuration without secrets, and the prompt versions, at start-up', async () => {
    const [event] = await started.app.store.events.list({ type: CONFIGURATION_RECORDED_EVENT });
    expect(event).toBeDefined();
    const text = JSON.stringify(event?.data);
    for (const secret of [SECRET_KEY, TOKEN, 'pseudo-secret']) expect(text).not.toContain(secret);
    const data = event?.data as { configuration: Record<string, Record<string, unknown>>; prompts: unknown[] };
    expect(data.configuration['llm']).toMatchObject({ apiKey: '[set]', temperature: 0.3, model: expect.any(String) });
    expect(data.configuration['api']).toMatchObject({ token: '[set]' });
    expect(data.prompts).toEqual([
      { file: 'intake.txt', version: expect.stringMatching(/^[0-9a-f]{12}$/) },
      { file: 'feedback.txt', version: expect.stringMatching(/^[0-9a-f]{12}$/) },
      { file: 'prompt-generator.txt', version: expect.stringMatching(/^[0-9a-f]{12}$/) },
    ]);
  });
});

describe('createProvenanceLlm', () => {
  it('lets a caller that defers the row write it in its own transaction, once', async () => {
    const store = await createSqliteStore({ filename: ':memory:' });
    const llm = createProvenanceLlm({
      llm: { model: 'm1', chat: async () => ({ content: 'hi', toolCalls: [], model: 'm1' }) },
      store,
      clock: createManualClock(new Date('2026-01-01T00:00:00Z')),
      providerHost: 'localhost:11434',
      temperature: undefined,
      prompts: [],
      log: { warn: () => undefined },
    });
    const response = await llm.chat({ messages: [{ role: 'user', content: 'x' }], deferProvenance: true });
    const rows = async () => store.research.llmCallsPage({}, undefined, 10);
    expect(response.callId).toBeUndefined();
    expect(await rows()).toEqual([]);
    const record = response.recordProvenance;
    if (!record) throw new Error('no deferred provenance');

    // Written in a transaction that rolls back: gone, and written again by the next one.
    await expect(
      store.transaction(async () => {
        expect(await record()).toBeTypeOf('number');
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    expect(await rows()).toEqual([]);
    const id = await store.transaction(() => record());
    expect((await rows()).map((row) => [row.id, row.outcome])).toEqual([[id, 'success']]);
    // Once committed, the same id without a second row.
    expect(await record()).toBe(id);
    expect(await rows()).toHaveLength(1);

    // A caller that does not defer gets the row written at once, as before.
    const direct = await llm.chat({ messages: [{ role: 'user', content: 'y' }] });
    expect(direct.recordProvenance).toBeUndefined();
    expect(direct.callId).toBeTypeOf('number');
    expect(await rows()).toHaveLength(2);
    await store.close();
  });

  it('records failed calls with their error code', async () => {
    const store = await createSqliteStore({ filename: ':memory:' });
    const llm = createProvenanceLlm({
      llm: {
        model: 'm1',
        chat: () => Promise.reject(new AppError('llm_error', 'provider down')),
      },
      store,
      clock: createManualClock(new Date('2026-01-01T00:00:00Z')),
      providerHost: providerHostOf('http://localhost:11434/v1'),
      temperature: 0.1,
      prompts: [{ file: 'feedback.txt', text: 'You are the coach.' }],
      log: { warn: () => undefined },
    });
    await expect(
      llm.chat({ messages: [{ role: 'system', content: 'You are the coach.\nProfile: x' }], purpose: 'feedback' }),
    ).rejects.toThrow('provider down');
    const [call] = await store.research.llmCallsPage({}, undefined, 10);
    expect(call).toMatchObject({
      purpose: 'feedback',
      model: 'm1',
      providerHost: 'localhost:11434',
      temperature: 0.1,
      promptFile: 'feedback.txt',
      promptVersion: promptVersion('You are the coach.\nProfile: x'),
      outcome: 'llm_error',
      error: 'provider down',
      createdAt: new Date('2026-01-01T00:00:00Z'),
    });
    await store.close();
  });
});
