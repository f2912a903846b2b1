/**
 * Participants' languages as BCP 47 tags (`en`, `es`, `pt-BR`). A tag is accepted when it is well formed
 * (`Intl.getCanonicalLocales`) and its language, script and region subtags are ones the runtime's locale data can
 * name (`Intl.DisplayNames` without fallback), so a typo such as `english` or `xx` is refused rather than stored.
 */

/** English: the language of the contract's fixed texts and of the built-in system prompts. */
export const ENGLISH = 'en';

/** ICU's display names, built once (building one costs more than many look-ups; every turn checks a language). */
let displayNames: { language: Intl.DisplayNames; script: Intl.DisplayNames; region: Intl.DisplayNames } | undefined;
function names(): NonNullable<typeof displayNames> {
  displayNames ??= {
    language: new Intl.DisplayNames([ENGLISH], { type: 'language', fallback: 'none' }),
    script: new Intl.DisplayNames([ENGLISH], { type: 'script', fallback: 'none' }),
    region: new Intl.DisplayNames([ENGLISH], { type: 'region', fallback: 'none' }),
  };
  return displayNames;
}

function knownSubtags(locale: Intl.Locale): boolean {
  const { language, script, region } = names();
  if (!language.of(locale.language)) return false;
  if (locale.script && !script.of(locale.script)) return false;
  if (locale.region && !region.of(locale.region)) return false;
  return true;
}

/** Answers for the tags seen so far (a study uses a handful); bounded so odd input cannot grow it without limit. */
const canonicalTags = new Map<string, string | undefined>();
const CANONICAL_TAGS_KEPT = 1_000;

/** The canonical spelling of a valid tag (`EN-us` → `en-US`), or undefined when it is not a known language. */
export function canonicalLanguageTag(tag: string): string | undefined {
  if (canonicalTags.has(tag)) return canonicalTags.get(tag);
  const canonical = canonicalize(tag);
  if (canonicalTags.size >= CANONICAL_TAGS_KEPT) canonicalTags.clear();
  canonicalTags.set(tag, canonical);
  return canonical;
}

function canonicalize(tag: string): string | undefined {
  const trimmed = tag.trim();
  if (!trimmed) return undefined;
  let canonical: string | undefined;
  try {
    canonical = Intl.getCanonicalLocales(trimmed)[0];
  } catch {
    return undefined;
  }
  if (!canonical) return undefined;
  try {
    return knownSubtags(new Intl.Locale(canonical)) ? canonical : undefined;
  } catch {
    return undefined;
  }
}

/** Why `tag` is refused, for error messages: `"xx" is not a known BCP 47 language tag such as "en", …`. */
export function unknownLanguageProblem(tag: string): string {
  return `"${tag}" is not a known BCP 47 language tag such as "en", "es" or "pt-BR"`;
}

/** The tag and its shorter forms, most specific first: `pt-BR` → [`pt-BR`, `pt`]. */
export function languageFallbackChain(tag: string): string[] {
  const chain: string[] = [];
  const parts = tag.split('-');
  for (let length = parts.length; length > 0; length -= 1) chain.push(parts.slice(0, length).join('-'));
  return chain;
}

/** The primary language subtag: `pt-BR` → `pt`. */
export function primaryLanguage(tag: string): string {
  return (tag.split('-')[0] ?? tag).toLowerCase();
}

export function isEnglish(tag: string): boolean {
  return primaryLanguage(tag) === ENGLISH;
}

/** The English name of a language for the model (`es` → `Spanish`, `pt-BR` → `Brazilian Portuguese`). */
export function languageName(tag: string): string {
  try {
    return names().language.of(tag) ?? names().language.of(primaryLanguage(tag)) ?? tag;
  } catch {
    return tag;
  }
}

/**
 * The instruction the system prompts carry for a participant who does not speak English: the prompts themselves
 * are written in English, so without it the model answers in English (or in whatever the participant last wrote).
 * Empty for English, whose requests stay exactly as they always were.
 */
export function languageInstruction(tag: string): string {
  if (isEnglish(tag)) return '';
  const name = languageName(tag);
  return [
    `LANGUAGE: The participant's language is ${name} (${tag}).`,
    `Write every message to the participant in ${name}, even though these instructions are in English.`,
    'Keep tool names, tool argument names and fixed values (such as times like "09:00", state names and tone tags) exactly as specified; profile fields may be written in the participant\'s words.',
  ].join(' ');
}
