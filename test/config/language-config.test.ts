import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('language settings', () => {
  it('defaults to English and canonicalises DEFAULT_LANGUAGE', () => {
    expect(loadConfig({}).language).toEqual({ defaultLanguage: 'en', catalogueDir: undefined });
    expect(loadConfig({ DEFAULT_LANGUAGE: 'PT-br' }).language.defaultLanguage).toBe('pt-BR');
    expect(loadConfig({ MESSAGE_CATALOGUE_DIR: '/study/catalogues' }).language.catalogueDir).toBe('/study/catalogues');
  });

  it('refuses an unknown DEFAULT_LANGUAGE, naming the variable', () => {
    expect(() => loadConfig({ DEFAULT_LANGUAGE: 'english' })).toThrow(/DEFAULT_LANGUAGE must be a BCP 47 language tag/);
  });
});
