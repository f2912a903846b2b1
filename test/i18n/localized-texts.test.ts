/** Every fixed text in the participant's language, and answers recognised in it. */
import { afterEach, describe, expect, it } from 'vitest';
import { adaptForChannel } from '../../src/channels/delivery-handler.ts';
import { renderPollAsText } from '../../src/channels/poll-text.ts';
import { createProfile } from '../../src/domain/profile.ts';
import { applyPollAnswer } from '../../src/engine/poll-effects.ts';
import { createBuiltInMessageCatalogue } from '../../src/i18n/built-in-catalogues.ts';
import { matchTypedAnswer, type OpenPoll } from '../../src/inbound/poll-answer-matching.ts';
import { fallbackPrompt } from '../../src/scheduling/fallback-prompt.ts';
import { createTimerHarness, HOUR, MINUTE, type TimerHarness } from '../scheduling/timers/harness.ts';
import { createEngineHarness } from '../support/engine-harness.ts';

const messages = createBuiltInMessageCatalogue();
const profile = () => createProfile(new Date('2026-03-02T14:00:00Z'));

describe('timers speak the participant language', () => {
  let harness: TimerHarness;
  afterEach(() => harness.close());

  it('sends the intensity poll and the daily prompt reminder in Spanish', async () => {
    harness = await createTimerHarness();
    const ana = await harness.enrol({ language: 'es' });
    const ada = await harness.enrol({ language: 'en' });
    await harness.sendScheduledPrompt(ana.id);
    await harness.sendScheduledPrompt(ada.id);
    await harness.advance(5 * HOUR + MINUTE);
    const spanish = harness.sentTexts(ana.id);
    expect(spanish).toContain('¿Qué tal la intensidad?');
    expect(spanish.at(-1)).toBe(messages.t('es', 'dailyPrompt.reminder'));
    const english = harness.sentTexts(ada.id);
    expect(english).toContain("How's the intensity?");
    expect(english.at(-1)).toBe(
      "Friendly check-in: we haven't heard back after today's habit prompt. Reply with a quick update when you're ready!",
    );
  });

  it('sends the feedback nudges in Spanish', async () => {
    harness = await createTimerHarness();
    const ana = await harness.enrol({ language: 'es' });
    await harness.store.transaction(() =>
      harness.timers.turnHooks.onImmediatePrompt({ participantId: ana.id, at: harness.clock.now() }),
    );
    await harness.advance(15 * MINUTE);
    await harness.advance(3 * HOUR);
    expect(harness.sentTexts(ana.id)).toEqual([
      messages.t('es', 'feedback.initialNudge'),
      messages.t('es', 'feedback.followupNudge'),
    ]);
  });
});

describe('fallback texts', () => {
  it('builds the fallback habit prompt in Spanish', () => {
    expect(fallbackPrompt({ habit_domain: 'caminar', prompt_anchor: 'el desayuno' }, 'es', messages)).toBe(
      // Not "justo después de el desayuno": a cue is named, not placed after "de" (test/scheduling/fallback-prompt).
      'Es hora de tu hábito de caminar (tu momento: el desayuno). Da hoy un pequeño paso. ¡Hasta una versión mínima cuenta!',
    );
    expect(fallbackPrompt({ habit_domain: '', prompt_anchor: '' }, 'es', messages)).toBe(
      '¡Es hora de tu hábito! Da hoy un pequeño paso. ¡Hasta una versión mínima cuenta!',
    );
  });

  it('answers "assistant unavailable" in Spanish when the model fails', async () => {
    const harness = await createEngineHarness({
      script: [{ error: new Error('provider down') }],
      participant: { language: 'es' },
    });
    try {
      const result = await harness.send('Hola');
      expect(result.reply).toBe(messages.t('es', 'reply.llmUnavailable'));
      expect(harness.messenger.textsFor(harness.participant.id)).toEqual([messages.t('es', 'reply.llmUnavailable')]);
    } finally {
      await harness.close();
    }
  });

  it('tells the model the language in every request of a Spanish turn, and not for English', async () => {
    const spanish = await createEngineHarness({ script: [{ content: '¡Hola!' }], participant: { language: 'es' } });
    const english = await createEngineHarness({ script: [{ content: 'Hi!' }] });
    try {
      await spanish.send('Hola');
      await english.send('Hello');
      const system = (request: { messages: { role: string; content: string }[] }) =>
        request.messages.filter((message) => message.role === 'system').map((message) => message.content);
      const spanishSystem = system(spanish.llm.requests[0] ?? { messages: [] });
      expect(spanishSystem[0]).toBe(spanish.prompts.intake);
      expect(spanishSystem[1]).toMatch(/^LANGUAGE: The participant's language is Spanish \(es\)\./);
      expect(system(english.llm.requests[0] ?? { messages: [] }).join('\n')).not.toContain('LANGUAGE:');
    } finally {
      await spanish.close();
      await english.close();
    }
  });
});

describe('numbered polls on channels without polls', () => {
  it('words the instruction in the language the poll was sent in', () => {
    expect(renderPollAsText({ question: '¿Lo hiciste?', options: ['Hecho', 'La próxima vez'], language: 'es' })).toBe(
      '¿Lo hiciste?\nResponde 1 para Hecho, 2 para La próxima vez',
    );
    expect(renderPollAsText({ question: 'Did you do it?', options: ['Done', 'Next time'], language: 'en' })).toBe(
      'Did you do it?\nReply 1 for Done, 2 for Next time',
    );
    const poll = {
      id: 'out_1',
      participantId: 'p',
      to: '+1',
      kind: 'poll' as const,
      text: '¿Qué tal la intensidad?',
      poll: { id: 'out_1', question: '¿Qué tal la intensidad?', options: ['Mantener', 'Subir'], language: 'es-MX' },
    };
    expect(adaptForChannel(poll, { supportsPolls: false }, messages)).toEqual({
      id: 'out_1',
      participantId: 'p',
      to: '+1',
      kind: 'text',
      text: '¿Qué tal la intensidad?\nResponde 1 para Mantener, 2 para Subir',
    });
  });
});

describe('poll answers in every language', () => {
  it('counts "Hecho" to the Spanish Done poll, with or without the question, and not "La próxima vez"', () => {
    const withQuestion = profile();
    expect(applyPollAnswer(withQuestion, { question: '¿Lo hiciste?', option: 'Hecho' }, messages)).toEqual({
      kind: 'success-counted',
      successCount: 1,
    });
    expect(applyPollAnswer(profile(), { option: 'Hecho' }, messages).kind).toBe('success-counted');
    expect(applyPollAnswer(profile(), { question: '¿Lo hiciste?', option: 'La próxima vez' }, messages).kind).toBe(
      'none',
    );
    expect(applyPollAnswer(profile(), { question: 'Did you do it?', option: 'Done' }).kind).toBe('success-counted');
  });

  it('moves the intensity with the Spanish options', () => {
    const up = profile();
    expect(applyPollAnswer(up, { question: '¿Qué tal la intensidad?', option: 'Subir' }, messages)).toEqual({
      kind: 'intensity-changed',
      from: 'normal',
      to: 'high',
    });
    expect(applyPollAnswer(profile(), { option: 'Bajar' }, messages)).toMatchObject({ to: 'low' });
    expect(applyPollAnswer(profile(), { question: '¿Qué tal la intensidad?', option: 'Mantener' }, messages)).toEqual({
      kind: 'intensity-kept',
      intensity: 'normal',
    });
  });

  const done: OpenPoll = { id: 'out_1', question: '¿Lo hiciste?', options: ['Hecho', 'La próxima vez'] };
  const intensity: OpenPoll = {
    id: 'out_2',
    question: '¿Qué tal la intensidad?',
    options: ['Bajar', 'Mantener', 'Subir'],
  };
  const englishDone: OpenPoll = { id: 'out_3', question: 'Did you do it?', options: ['Done', 'Next time'] };

  it('matches typed text against every open poll, newest first, and numbers against the newest only', () => {
    expect(matchTypedAnswer('hecho!', [intensity, done], messages)).toEqual({
      pollId: 'out_1',
      question: '¿Lo hiciste?',
      option: 'Hecho',
    });
    expect(matchTypedAnswer('1', [intensity, done], messages)).toMatchObject({ pollId: 'out_2', option: 'Bajar' });
    expect(matchTypedAnswer('7', [intensity, done], messages)).toBeUndefined();
    expect(matchTypedAnswer('Hecho, y fue genial', [intensity, done], messages)).toBeUndefined();
    expect(matchTypedAnswer('Hecho', [], messages)).toBeUndefined();
  });

  it('maps an option typed in another catalogue language to the option as it was sent', () => {
    expect(matchTypedAnswer('Hecho', [englishDone], messages)).toEqual({
      pollId: 'out_3',
      question: 'Did you do it?',
      option: 'Done',
    });
    expect(matchTypedAnswer('done', [done], messages)).toMatchObject({ option: 'Hecho' });
    expect(matchTypedAnswer('increase', [intensity], messages)).toMatchObject({ option: 'Subir' });
    // Only PromptPipe's own polls are translated.
    expect(matchTypedAnswer('Hecho', [{ id: 'x', question: 'Coffee?', options: ['Done'] }], messages)).toBeUndefined();
  });
});
