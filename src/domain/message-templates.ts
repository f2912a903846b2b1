/**
 * The approved templates a channel with a 24-hour window sends outside it, by message kind and language: a WhatsApp
 * Cloud API template (name and language code) or a Twilio Content Template (its `HX…` SID).
 *
 * Kinds: `text`, any message, with one body variable that carries the text (and a poll's options, numbered); and
 * `done_poll` / `intensity_poll`, a template whose quick-reply buttons are that poll's options, in order, with one
 * body variable for the text before the buttons. Languages: the participant's BCP 47 tag, its primary language, then
 * `*` (any other language).
 *
 * A mapping file says the same in JSON (`WHATSAPP_CLOUD_TEMPLATES_FILE`, `TWILIO_CONTENT_TEMPLATES_FILE`):
 * `{"text": {"en": …, "es": …, "*": …}, "done_poll": {"en": …}, "intensity_poll": {"en": …}}`.
 */
import { canonicalLanguageTag } from './language.ts';

export const TemplateKind = { TEXT: 'text', DONE_POLL: 'done_poll', INTENSITY_POLL: 'intensity_poll' } as const;
export type TemplateKind = (typeof TemplateKind)[keyof typeof TemplateKind];
export const TEMPLATE_KINDS: readonly TemplateKind[] = Object.values(TemplateKind);

/** The key of the template for any language without one of its own. */
export const ANY_LANGUAGE = '*';

/** Templates by kind, then by language (a canonical BCP 47 tag, or `*`). */
export type TemplateCatalogue<T> = Partial<Record<TemplateKind, Readonly<Record<string, T>>>>;

/** The template of this kind for a participant's language: the exact tag, its primary language, then `*`. */
export function templateFor<T>(
  catalogue: TemplateCatalogue<T>,
  kind: TemplateKind,
  language: string | undefined,
): T | undefined {
  const byLanguage = catalogue[kind];
  if (!byLanguage) return undefined;
  const tag = language ? canonicalLanguageTag(language) : undefined;
  const primary = tag?.split('-')[0];
  for (const key of [tag, primary, ANY_LANGUAGE]) {
    if (key !== undefined && byLanguage[key] !== undefined) return byLanguage[key];
  }
  return undefined;
}

/** Whether the catalogue has any template at all (else messages outside the window fail, saying why). */
export function hasTemplates(catalogue: TemplateCatalogue<unknown>): boolean {
  return TEMPLATE_KINDS.some((kind) => Object.keys(catalogue[kind] ?? {}).length > 0);
}

/** Adds one template to a catalogue (later additions win: a mapping file entry over a setting). */
export function withTemplate<T>(
  catalogue: TemplateCatalogue<T>,
  kind: TemplateKind,
  language: string,
  template: T,
): TemplateCatalogue<T> {
  return { ...catalogue, [kind]: { ...catalogue[kind], [language]: template } };
}

/** A language key of a mapping: `*` or a canonical tag; undefined when it is neither. */
export function templateLanguageKey(key: string): string | undefined {
  return key === ANY_LANGUAGE ? ANY_LANGUAGE : canonicalLanguageTag(key);
}

/**
 * Reads a mapping file's JSON into a catalogue; `readTemplate` turns one value into a template or says what is wrong
 * with it. Every problem is named by its place (`done_poll.es: …`), so a start-up error lists them all.
 */
export function parseTemplateMapping<T>(
  json: unknown,
  readTemplate: (value: unknown, language: string) => T | { problem: string },
): { catalogue: TemplateCatalogue<T>; problems: string[] } {
  const problems: string[] = [];
  let catalogue: TemplateCatalogue<T> = {};
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { catalogue, problems: [`must be a JSON object such as {"text": {"en": …}}`] };
  }
  for (const [kind, byLanguage] of Object.entries(json)) {
    if (!(TEMPLATE_KINDS as readonly string[]).includes(kind)) {
      problems.push(`"${kind}" is not a message kind (${TEMPLATE_KINDS.join(', ')})`);
      continue;
    }
    if (typeof byLanguage !== 'object' || byLanguage === null || Array.isArray(byLanguage)) {
      problems.push(`${kind} must be an object of languages such as {"en": …, "*": …}`);
      continue;
    }
    for (const [key, value] of Object.entries(byLanguage)) {
      const language = templateLanguageKey(key);
      if (!language) {
        problems.push(`${kind}.${key}: not a BCP 47 language tag (such as en, es, pt-BR) or *`);
        continue;
      }
      const template = readTemplate(value, language);
      if (typeof template === 'object' && template !== null && 'problem' in template) {
        problems.push(`${kind}.${key}: ${template.problem}`);
        continue;
      }
      catalogue = withTemplate(catalogue, kind as TemplateKind, language, template as T);
    }
  }
  return { catalogue, problems };
}
