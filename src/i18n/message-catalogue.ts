/**
 * The message catalogue: every fixed text PromptPipe sends to participants or matches in their answers, per
 * language. One JSON file per language (`catalogues/<tag>.json`), all with the keys of the English one, which is the
 * contract's wording and the source of the key list. A key a catalogue lacks falls back to English (reported once,
 * at start-up, by whoever builds the catalogue); a language without a catalogue uses its shorter tag (`es-MX` →
 * `es`), then English.
 *
 * Built once in the composition root and injected (`messages`) into whatever sends a fixed text; `t(language, key,
 * params)` is the only lookup. Placeholders are `{name}`.
 */

import { canonicalLanguageTag, ENGLISH, languageFallbackChain } from '../domain/language.ts';
import type english from './catalogues/en.json';

/** Every catalogue key: exactly the keys of the English catalogue. */
export type MessageKey = keyof typeof english;
export type MessageParams = Readonly<Record<string, string | number>>;
/** `t(language, key, params)`: `language` undefined → the default language. */
export type Translate = (language: string | undefined, key: MessageKey, params?: MessageParams) => string;

/** A catalogue as read from its file: key → text. */
export type RawCatalogue = Readonly<Record<string, unknown>>;

export interface MessageCatalogue {
  /** `DEFAULT_LANGUAGE`: the language of a participant who has none recorded. */
  readonly defaultLanguage: string;
  /** The languages with a catalogue (canonical tags), English first. */
  readonly languages: readonly string[];
  readonly t: Translate;
  /** The catalogue language used for `language`: itself, a shorter form, else English. */
  resolve(language: string | undefined): string;
}

/** What is wrong with one catalogue: reported as a start-up warning. */
export interface CatalogueProblem {
  language: string;
  /** Keys of the English catalogue this one lacks (or has as a non-string or empty value): English is used. */
  missingKeys: string[];
  /** Keys English does not have: ignored. */
  unknownKeys: string[];
}

const PLACEHOLDER = /\{(\w+)\}/g;

/** Substitutes `{name}`; a placeholder without a value stays as written, so a mistake is visible, not silent. */
export function formatMessage(template: string, params: MessageParams = {}): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : String(value);
  });
}

/** The placeholders of a text, sorted: a translation must use the same ones. */
export function placeholdersOf(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((match) => match[1] ?? '').sort();
}

function completeCatalogue(
  language: string,
  raw: RawCatalogue,
  fallback: Readonly<Record<MessageKey, string>>,
): { entries: Record<MessageKey, string>; problem: CatalogueProblem | undefined } {
  const keys = Object.keys(fallback) as MessageKey[];
  const entries = { ...fallback };
  const missingKeys: string[] = [];
  for (const key of keys) {
    const value = raw[key];
    if (typeof value === 'string' && value.trim() !== '') entries[key] = value;
    else missingKeys.push(key);
  }
  const unknownKeys = Object.keys(raw).filter((key) => !(key in fallback));
  const problem = missingKeys.length > 0 || unknownKeys.length > 0 ? { language, missingKeys, unknownKeys } : undefined;
  return { entries, problem };
}

/**
 * Builds the catalogue from raw catalogues by language tag. English must be present and complete (it is the
 * fallback of everything). Returns the problems of the others for the caller to report.
 */
export function createMessageCatalogue(options: {
  catalogues: Readonly<Record<string, RawCatalogue>>;
  defaultLanguage?: string;
}): { messages: MessageCatalogue; problems: CatalogueProblem[] } {
  const rawEnglish = options.catalogues[ENGLISH];
  if (!rawEnglish) throw new Error('the English message catalogue (en) is required');
  const englishEntries = Object.fromEntries(
    Object.entries(rawEnglish).filter(([, value]) => typeof value === 'string'),
  ) as Record<MessageKey, string>;
  const byLanguage = new Map<string, Record<MessageKey, string>>([[ENGLISH, englishEntries]]);
  const problems: CatalogueProblem[] = [];
  for (const [tag, raw] of Object.entries(options.catalogues)) {
    const language = canonicalLanguageTag(tag);
    if (!language) throw new Error(`message catalogue "${tag}": not a BCP 47 language tag`);
    if (language === ENGLISH) continue;
    const { entries, problem } = completeCatalogue(language, raw, englishEntries);
    byLanguage.set(language, entries);
    if (problem) problems.push(problem);
  }
  const defaultLanguage = canonicalLanguageTag(options.defaultLanguage ?? ENGLISH) ?? ENGLISH;

  function resolve(language: string | undefined): string {
    const wanted = canonicalLanguageTag(language ?? defaultLanguage) ?? defaultLanguage;
    for (const candidate of [...languageFallbackChain(wanted), ...languageFallbackChain(defaultLanguage)]) {
      if (byLanguage.has(candidate)) return candidate;
    }
    return ENGLISH;
  }

  const messages: MessageCatalogue = {
    defaultLanguage,
    languages: [...byLanguage.keys()],
    resolve,
    t(language, key, params) {
      const entries = byLanguage.get(resolve(language)) ?? englishEntries;
      return formatMessage(entries[key] ?? englishEntries[key] ?? key, params);
    },
  };
  return { messages, problems };
}

/** One line per problem, for the start-up log. */
export function describeCatalogueProblem(problem: CatalogueProblem): string {
  const parts: string[] = [];
  if (problem.missingKeys.length > 0) {
    parts.push(`lacks ${problem.missingKeys.join(', ')} (English is used for them)`);
  }
  if (problem.unknownKeys.length > 0) parts.push(`has unknown keys ${problem.unknownKeys.join(', ')} (ignored)`);
  return `message catalogue "${problem.language}" ${parts.join('; ')}`;
}
