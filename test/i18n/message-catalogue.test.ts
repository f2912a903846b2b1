import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  numberedPollInstruction,
  OPT_IN_CONFIRMATION,
  OPT_OUT_CONFIRMATION,
} from '../../src/channels/channel-texts.ts';
import { DONE_POLL, INTENSITY_POLL_QUESTION, IntensityOption } from '../../src/domain/polls.ts';
import { FALLBACK_TEXT } from '../../src/engine/tool-loop.ts';
import { builtInCatalogues, createBuiltInMessageCatalogue } from '../../src/i18n/built-in-catalogues.ts';
import { loadMessageCatalogue } from '../../src/i18n/load-message-catalogue.ts';
import { createMessageCatalogue, formatMessage, placeholdersOf } from '../../src/i18n/message-catalogue.ts';
import { UNREGISTER_NOTICE } from '../../src/participants/participant-service.ts';
import { fallbackPrompt } from '../../src/scheduling/fallback-prompt.ts';
import { DAILY_PROMPT_REMINDER_MESSAGE } from '../../src/scheduling/timers/daily-prompt-reminder.ts';
import { FEEDBACK_FOLLOWUP_NUDGE, FEEDBACK_INITIAL_NUDGE } from '../../src/scheduling/timers/feedback-timers.ts';

const CATALOGUE_DIRECTORY = join(import.meta.dirname, '..', '..', 'src', 'i18n', 'catalogues');

function readCatalogue(file: string): Record<string, string> {
  return JSON.parse(readFileSync(join(CATALOGUE_DIRECTORY, file), 'utf8')) as Record<string, string>;
}

const files = readdirSync(CATALOGUE_DIRECTORY).filter((file) => file.endsWith('.json'));
const english = readCatalogue('en.json');

describe('the shipped catalogues', () => {
  it('ships English and Spanish, and every file in the folder is a built-in catalogue', () => {
    expect(files.sort()).toEqual(['en.json', 'es.json']);
    expect(Object.keys(builtInCatalogues()).sort()).toEqual(files.map((file) => file.replace('.json', '')).sort());
  });

  it.each(files)('%s has exactly the keys of the English one, each a non-empty text', (file) => {
    const catalogue = readCatalogue(file);
    expect(Object.keys(catalogue).sort()).toEqual(Object.keys(english).sort());
    for (const value of Object.values(catalogue)) {
      expect(typeof value).toBe('string');
      expect(value.trim()).not.toBe('');
    }
  });

  it.each(files)('%s uses the same placeholders as English in every text', (file) => {
    const catalogue = readCatalogue(file);
    for (const [key, text] of Object.entries(english)) {
      expect({ key, placeholders: placeholdersOf(catalogue[key] ?? '') }).toEqual({
        key,
        placeholders: placeholdersOf(text),
      });
    }
  });

  it('builds complete, without problems', () => {
    expect(createMessageCatalogue({ catalogues: builtInCatalogues() }).problems).toEqual([]);
  });

  it('keeps the English texts exactly as the contract fixes them', () => {
    const messages = createBuiltInMessageCatalogue();
    const t = (key: Parameters<typeof messages.t>[1], params?: Record<string, string>) => messages.t('en', key, params);
    expect(t('donePoll.question')).toBe('Did you do it?');
    expect([t('donePoll.done'), t('donePoll.nextTime')]).toEqual(['Done', 'Next time']);
    expect(t('intensityPoll.question')).toBe("How's the intensity?");
    expect([t('intensityPoll.decrease'), t('intensityPoll.keep'), t('intensityPoll.increase')]).toEqual([
      'Decrease',
      'Keep current',
      'Increase',
    ]);
    // The constants the code and its tests use are the English catalogue's texts.
    expect(t('donePoll.question')).toBe(DONE_POLL.question);
    expect(t('intensityPoll.question')).toBe(INTENSITY_POLL_QUESTION);
    expect(t('intensityPoll.keep')).toBe(IntensityOption.KEEP);
    expect(t('notice.unregistered')).toBe(UNREGISTER_NOTICE);
    expect(t('dailyPrompt.reminder')).toBe(DAILY_PROMPT_REMINDER_MESSAGE);
    expect(t('feedback.initialNudge')).toBe(FEEDBACK_INITIAL_NUDGE);
    expect(t('feedback.followupNudge')).toBe(FEEDBACK_FOLLOWUP_NUDGE);
    expect(t('reply.emptyResponse')).toBe(FALLBACK_TEXT.emptyResponse);
    expect(t('reply.roundsExhausted')).toBe(FALLBACK_TEXT.roundsExhausted);
    expect(t('reply.llmUnavailable')).toBe(FALLBACK_TEXT.llmUnavailable);
    expect(t('notice.optOut')).toBe(OPT_OUT_CONFIRMATION);
    expect(t('notice.optIn')).toBe(OPT_IN_CONFIRMATION);
    expect(numberedPollInstruction(['Done', 'Next time'])).toBe('Reply 1 for Done, 2 for Next time');
    expect(fallbackPrompt({ habit_domain: 'walking', prompt_anchor: 'breakfast' })).toBe(
      'Time for your walking habit: right after breakfast, take one small step today. Even a tiny version counts!',
    );
  });
});

describe('t(language, key, params)', () => {
  const messages = createBuiltInMessageCatalogue();

  it('speaks Spanish, a regional Spanish through its base language, and English otherwise', () => {
    expect(messages.t('es', 'donePoll.done')).toBe('Hecho');
    expect(messages.t('es-MX', 'donePoll.done')).toBe('Hecho');
    expect(messages.t('ES-mx', 'donePoll.done')).toBe('Hecho');
    expect(messages.t('de', 'donePoll.done')).toBe('Done');
    expect(messages.t(undefined, 'donePoll.done')).toBe('Done');
    expect(messages.resolve('pt-BR')).toBe('en');
  });

  it('uses DEFAULT_LANGUAGE for a participant without a language', () => {
    expect(createBuiltInMessageCatalogue('es').t(undefined, 'donePoll.question')).toBe('¿Lo hiciste?');
  });

  it('substitutes parameters and leaves an unknown placeholder visible', () => {
    expect(messages.t('es', 'dailyPrompt.fallbackNamedHabit', { domain: 'caminar' })).toBe('tu hábito de caminar');
    expect(formatMessage('{a} and {b}', { a: 1 })).toBe('1 and {b}');
  });
});

describe('a study catalogue (MESSAGE_CATALOGUE_DIR)', () => {
  let directory: string;
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  function start(files: Record<string, unknown>) {
    directory = mkdtempSync(join(tmpdir(), 'promptpipe-catalogues-'));
    for (const [name, content] of Object.entries(files)) writeFileSync(join(directory, name), JSON.stringify(content));
    const warnings: { data: Record<string, unknown>; message: string }[] = [];
    const messages = loadMessageCatalogue({
      defaultLanguage: 'en',
      catalogueDir: directory,
      log: { warn: (data, message) => warnings.push({ data, message }) },
    });
    return { messages, warnings };
  }

  it('falls back to English for a missing key and warns at start-up naming the language and the keys', () => {
    const { messages, warnings } = start({
      'fr.json': { 'donePoll.question': "L'as-tu fait ?", 'donePoll.done': 'Fait', 'no.such.key': 'x' },
    });
    expect(messages.t('fr', 'donePoll.question')).toBe("L'as-tu fait ?");
    expect(messages.t('fr', 'donePoll.done')).toBe('Fait');
    expect(messages.t('fr', 'donePoll.nextTime')).toBe('Next time');
    expect(messages.t('fr-CA', 'intensityPoll.question')).toBe("How's the intensity?");
    expect(warnings).toHaveLength(1);
    const [warning] = warnings;
    expect(warning?.data['language']).toBe('fr');
    expect(warning?.data['missing_keys']).toContain('donePoll.nextTime');
    expect(warning?.data['missing_keys']).not.toContain('donePoll.done');
    expect(warning?.data['unknown_keys']).toEqual(['no.such.key']);
    expect(warning?.message).toContain('"fr"');
    expect(warning?.message).toContain('donePoll.nextTime');
  });

  it('lets a study reword a built-in language key by key, without a warning', () => {
    const { messages, warnings } = start({ 'es.json': { 'donePoll.done': 'Listo' } });
    expect(messages.t('es', 'donePoll.done')).toBe('Listo');
    expect(messages.t('es', 'donePoll.nextTime')).toBe('La próxima vez');
    expect(warnings).toEqual([]);
  });

  it('refuses a file not named after a language tag, and a file that is not JSON', () => {
    expect(() => start({ 'klingonese.json': {} })).toThrow(/not named after a BCP 47 language tag/);
    rmSync(directory, { recursive: true, force: true });
    directory = mkdtempSync(join(tmpdir(), 'promptpipe-catalogues-'));
    writeFileSync(join(directory, 'de.json'), '{ not json');
    expect(() =>
      loadMessageCatalogue({ defaultLanguage: 'en', catalogueDir: directory, log: { warn: () => undefined } }),
    ).toThrow(/not valid JSON/);
  });
});
