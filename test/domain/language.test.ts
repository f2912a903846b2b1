import { describe, expect, it } from 'vitest';
import {
  canonicalLanguageTag,
  languageFallbackChain,
  languageInstruction,
  languageName,
} from '../../src/domain/language.ts';

describe('canonicalLanguageTag', () => {
  it.each([
    ['en', 'en'],
    ['es', 'es'],
    ['pt-BR', 'pt-BR'],
    ['PT-br', 'pt-BR'],
    ['es-419', 'es-419'],
    ['zh-Hant-TW', 'zh-Hant-TW'],
    [' fr ', 'fr'],
  ])('accepts %s as %s', (tag, canonical) => {
    expect(canonicalLanguageTag(tag)).toBe(canonical);
  });

  it.each(['', 'xx', 'english', 'klingon', 'es-XX', 'en_US!', 'not a language', '123', 'es-Abcd'])(
    'refuses %j',
    (tag) => {
      expect(canonicalLanguageTag(tag)).toBeUndefined();
    },
  );
});

describe('language helpers', () => {
  it('shortens a tag from the most specific form', () => {
    expect(languageFallbackChain('zh-Hant-TW')).toEqual(['zh-Hant-TW', 'zh-Hant', 'zh']);
  });

  it('names languages in English for the model', () => {
    expect(languageName('es')).toBe('Spanish');
    expect(languageName('pt-BR')).toBe('Brazilian Portuguese');
  });

  it('instructs the model for any language but English', () => {
    expect(languageInstruction('en')).toBe('');
    expect(languageInstruction('en-GB')).toBe('');
    expect(languageInstruction('es')).toContain('Spanish (es)');
    expect(languageInstruction('es')).toMatch(/^LANGUAGE: /);
  });
});
