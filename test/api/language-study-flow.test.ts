/**
 * Participants in their own language, through the wired application (real engine, tools, timers, job runner,
 * OpenAI-compatible adapter against the scripted model server, webhook gateway, manual clock):
 * a Spanish-speaking participant from enrollment to "Hecho" (as a poll answer and as typed text), a participant
 * switched from English to Spanish by PUT, and per-language prompt files.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import {
  type ScriptedChatRequest,
  type ScriptedOpenAiServer,
  type ScriptedReply,
  startScriptedOpenAiServer,
} from '../support/scripted-openai-server.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

const PHONE = '+15551230001';
const SPANISH_INSTRUCTION = "LANGUAGE: The participant's language is Spanish (es).";
let model: ScriptedOpenAiServer | undefined;
let gateway: HttpReceiver | undefined;
let app: Application | undefined;
let promptsDirectory: string | undefined;

const systemTextOf = (request: ScriptedChatRequest): string =>
  request.body.messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content ?? '')
    .join('\n');

/** The coach, scripted by what it is asked; it answers in the language the instruction names. */
function coach(request: ScriptedChatRequest): ScriptedReply {
  const system = systemTextOf(request);
  const spanish = system.includes(SPANISH_INSTRUCTION);
  const last = request.lastMessage;
  if (system.startsWith('You write one short daily habit prompt')) {
    return {
      content: spanish ? 'Después del desayuno, camina cinco minutos.' : 'After breakfast, walk for five minutes.',
    };
  }
  if (system.includes('(FEEDBACK)')) return { content: spanish ? '¡Muy bien hecho!' : 'Well done!' };
  if (last?.content?.includes('expecting a greeting')) {
    return { content: spanish ? '¡Hola Ana! ¿Qué hábito quieres construir?' : 'Hi Ada! Which habit shall we build?' };
  }
  if (last?.role === 'user') {
    return {
      toolCalls: [
        {
          name: 'save_user_profile',
          arguments: {
            habit_domain: 'caminar',
            motivational_frame: 'más energía',
            preferred_time: '09:00',
            prompt_anchor: 'después del desayuno',
          },
        },
      ],
    };
  }
  const previousCall = [...request.body.messages].reverse().find((message) => message.tool_calls)?.tool_calls?.[0];
  if (previousCall?.function.name === 'save_user_profile') {
    return { toolCalls: [{ name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '09:00' } }] };
  }
  return { content: spanish ? 'Listo: tu recordatorio llega cada mañana.' : 'All set.' };
}

const eventually = (check: () => boolean | Promise<boolean>, what: string) =>
  waitUntil(what, check, { timeoutMs: 5000 });

async function start(environment: Record<string, string> = {}): Promise<Application> {
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({ respond: coach });
  app = await startTestApplication({
    OPENAI_BASE_URL: model.baseUrl,
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    ...environment,
  });
  return app;
}

afterEach(async () => {
  await app?.stop();
  await model?.close();
  await gateway?.close();
  if (promptsDirectory) rmSync(promptsDirectory, { recursive: true, force: true });
  app = undefined;
  model = undefined;
  gateway = undefined;
  promptsDirectory = undefined;
});

type Delivered = { kind: string; text: string; poll?: { id: string; question: string; options: string[] } };
const delivered = (): Delivered[] => (gateway?.requests ?? []).map((request) => JSON.parse(request.body) as Delivered);

async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) {
  const response = await app?.server.inject({ method, url, ...(payload ? { payload: payload as object } : {}) });
  return response?.json();
}

async function say(text: string, id: string, pollAnswer?: { poll_id: string; option: string }) {
  const before = gateway?.requests.length ?? 0;
  await call('POST', '/channels/webhook/messages', {
    from: PHONE,
    text,
    id,
    ...(pollAnswer ? { poll_answer: pollAnswer } : {}),
  });
  await app?.inbound.idle();
  await eventually(() => (gateway?.requests.length ?? 0) > before, `the reply to "${text}"`);
}

async function profileOf(id: string) {
  return (await call('GET', `/conversation/participants/${id}/state`)).result.profile;
}

/** Enrollment → greeting → one intake message (profile + 09:00 schedule). */
async function enrollAndIntake(enrollment: Record<string, string>): Promise<string> {
  const enrolled = await call('POST', '/conversation/participants', {
    phone_number: PHONE,
    timezone: 'America/New_York',
    ...enrollment,
  });
  const id = enrolled.result.id as string;
  await eventually(() => (gateway?.requests.length ?? 0) === 1, 'the greeting');
  await say('Caminar, después del desayuno, sobre las 9', 'in-1');
  return id;
}

/**
 * Moves the clock to a prompt day's 09:00 local and returns that day's deliveries once all `expected` arrived: the
 * prompt, the Done poll and the intensity poll (one a day), plus whatever timers fired on the way.
 */
async function promptDay(day: string, expected = 3): Promise<Delivered[]> {
  const before = gateway?.requests.length ?? 0;
  await call('POST', '/admin/clock', { set_to: `${day}T14:00:00Z` });
  await eventually(() => (gateway?.requests.length ?? 0) >= before + expected, `the prompt of ${day}`);
  return delivered().slice(before);
}

describe('a Spanish-speaking participant', () => {
  it('is coached in Spanish from enrollment to "Hecho", as a poll answer and as typed text', async () => {
    await start();
    const id = await enrollAndIntake({ name: 'Ana', language: 'es' });
    expect((await call('GET', `/conversation/participants/${id}`)).result.language).toBe('es');
    expect(delivered()[0]?.text).toBe('¡Hola Ana! ¿Qué hábito quieres construir?');
    expect(delivered()[1]?.text).toBe('Listo: tu recordatorio llega cada mañana.');

    const [prompt, donePoll, intensityPoll] = await promptDay('2026-03-03');
    expect(prompt).toMatchObject({ kind: 'text', text: 'Después del desayuno, camina cinco minutos.' });
    expect(donePoll).toMatchObject({
      kind: 'poll',
      poll: { question: '¿Lo hiciste?', options: ['Hecho', 'La próxima vez'] },
    });
    expect(intensityPoll).toMatchObject({
      kind: 'poll',
      poll: { question: '¿Qué tal la intensidad?', options: ['Bajar', 'Mantener', 'Subir'] },
    });

    // Day 1: the structured answer of the poll.
    await say('', 'in-2', { poll_id: donePoll?.poll?.id ?? '', option: 'Hecho' });
    expect((await profileOf(id)).success_count).toBe(1);
    expect(model?.requests.at(-1)?.lastMessage?.content).toBe('Q: ¿Lo hiciste? A: Hecho');

    // Day 2: typed, after the intensity poll that followed the Done poll.
    await promptDay('2026-03-04');
    await say('hecho', 'in-3');
    expect((await profileOf(id)).success_count).toBe(2);
    const [event] = (await app?.store.events.list({ participantId: id, type: 'poll-answered' })) ?? [];
    expect(event?.data).toMatchObject({ kind: 'success-counted', question: '¿Lo hiciste?', option: 'Hecho' });

    // Every request to the model — greeting, intake, prompt generation, feedback — carried the instruction.
    expect(model?.requests.length).toBeGreaterThan(5);
    for (const request of model?.requests ?? []) {
      expect(systemTextOf(request)).toContain(SPANISH_INSTRUCTION);
      expect(request.body.messages[0]?.role).toBe('system');
    }
  });

  it('counts a typed "Hecho" as Done on the first prompt day', async () => {
    await start();
    const id = await enrollAndIntake({ name: 'Ana', language: 'es' });
    await promptDay('2026-03-03');
    await say('Hecho.', 'in-2');
    expect((await profileOf(id)).success_count).toBe(1);
  });

  it('is the default with DEFAULT_LANGUAGE=es', async () => {
    await start({ DEFAULT_LANGUAGE: 'es' });
    const id = await enrollAndIntake({ name: 'Ana' });
    expect((await call('GET', `/conversation/participants/${id}`)).result.language).toBe('es');
    const [, donePoll] = await promptDay('2026-03-03');
    expect(donePoll?.poll?.question).toBe('¿Lo hiciste?');
  });
});

describe('a participant switched from English to Spanish by PUT', () => {
  it('gets the next prompt, its polls and the coach in Spanish', async () => {
    await start();
    const id = await enrollAndIntake({ name: 'Ada' });
    const [englishPrompt, englishPoll] = await promptDay('2026-03-03');
    expect(englishPrompt?.text).toBe('After breakfast, walk for five minutes.');
    expect(englishPoll?.poll).toEqual(
      expect.objectContaining({ question: 'Did you do it?', options: ['Done', 'Next time'] }),
    );
    for (const request of model?.requests ?? []) expect(systemTextOf(request)).not.toContain('LANGUAGE:');

    const switched = await call('PUT', `/conversation/participants/${id}`, { language: 'es' });
    expect(switched.result.language).toBe('es');
    const requestsBefore = model?.requests.length ?? 0;
    // The unanswered first prompt's reminder fires on the way, already in Spanish.
    const [reminder, spanishPrompt, spanishPoll] = await promptDay('2026-03-04', 4);
    expect(reminder?.text).toMatch(/^Un saludo: no hemos sabido de ti/);
    expect(spanishPrompt?.text).toBe('Después del desayuno, camina cinco minutos.');
    expect(spanishPoll?.poll).toEqual(
      expect.objectContaining({ question: '¿Lo hiciste?', options: ['Hecho', 'La próxima vez'] }),
    );
    const generation = model?.requests
      .slice(requestsBefore)
      .find((request) => systemTextOf(request).startsWith('You write one short daily habit prompt'));
    expect(systemTextOf(generation as ScriptedChatRequest)).toContain(SPANISH_INSTRUCTION);

    // "Done" to the Spanish poll still counts: options are recognised in every catalogue language.
    await say('Done', 'in-2');
    expect((await profileOf(id)).success_count).toBe(1);
    expect(systemTextOf(model?.requests.at(-1) as ScriptedChatRequest)).toContain(SPANISH_INSTRUCTION);
  });
});

describe('per-language prompt files', () => {
  it('uses prompts/es/intake.txt for Spanish and the default file (plus the instruction) for other languages', async () => {
    promptsDirectory = mkdtempSync(join(tmpdir(), 'promptpipe-prompts-'));
    mkdirSync(join(promptsDirectory, 'es'));
    writeFileSync(join(promptsDirectory, 'intake.txt'), 'You are the intake coach (INTAKE), default file.');
    writeFileSync(join(promptsDirectory, 'es', 'intake.txt'), 'Eres el coach de admisión (INTAKE), archivo español.');
    await start({ INTAKE_BOT_PROMPT_FILE: join(promptsDirectory, 'intake.txt') });

    await call('POST', '/conversation/participants', { phone_number: PHONE, language: 'es-MX' });
    await eventually(() => (model?.requests.length ?? 0) === 1, 'the Spanish greeting request');
    await call('POST', '/conversation/participants', { phone_number: '+15551230002', language: 'fr' });
    await eventually(() => (model?.requests.length ?? 0) === 2, 'the French greeting request');

    const [spanish, french] = model?.requests ?? [];
    expect(spanish?.body.messages[0]?.content).toBe('Eres el coach de admisión (INTAKE), archivo español.');
    expect(systemTextOf(spanish as ScriptedChatRequest)).toContain(
      "The participant's language is Mexican Spanish (es-MX).",
    );
    expect(french?.body.messages[0]?.content).toBe('You are the intake coach (INTAKE), default file.');
    expect(systemTextOf(french as ScriptedChatRequest)).toContain(
      "LANGUAGE: The participant's language is French (fr).",
    );

    // Provenance: the per-language file is listed with its version at start-up and named on the call that used it.
    const current = app as Application;
    const [startup] = await current.store.events.list({ type: 'configuration-recorded' });
    const files = ((startup?.data.prompts ?? []) as { file: string; version: string }[]).map((prompt) => prompt.file);
    expect(files).toEqual(expect.arrayContaining(['intake.txt', 'es/intake.txt']));
    const calls = await current.store.research.llmCallsPage({}, undefined, 10);
    expect(calls.map((call) => call.promptFile)).toEqual(['es/intake.txt', 'intake.txt']);
  });
});
