/**
 * The template settings of the channels with a 24-hour window, as the configuration reads them (it alone reads the
 * environment and the files it names; these functions only check and shape what it read). Each problem is named by
 * its setting, so a start-up error lists them all.
 *
 * - WhatsApp Cloud API: `WHATSAPP_CLOUD_DONE_POLL_TEMPLATE_NAME` and `WHATSAPP_CLOUD_INTENSITY_POLL_TEMPLATE_NAME`
 *   (quick-reply templates, in `WHATSAPP_CLOUD_TEMPLATE_LANGUAGE`, for every language), and
 *   `WHATSAPP_CLOUD_TEMPLATES_FILE`: `{"text": {"es": "study_message"}, "done_poll": {"en": {"name": "done_check",
 *   "language": "en_US"}}}` (a bare name is in the language of its key: `pt-BR` → `pt_BR`; `*` →
 *   `WHATSAPP_CLOUD_TEMPLATE_LANGUAGE`).
 * - Twilio: `TWILIO_CONTENT_SID_<KIND>` (any language) and `TWILIO_CONTENT_SID_<KIND>_<LANGUAGE>`, kinds `TEXT`,
 *   `DONE_POLL`, `INTENSITY_POLL` (`TWILIO_CONTENT_SID_TEXT_PT_BR`), and `TWILIO_CONTENT_TEMPLATES_FILE`:
 *   `{"text": {"en": "HX…", "*": "HX…"}, …}`. A file entry wins over a setting for the same kind and language.
 */

import {
  ANY_LANGUAGE,
  parseTemplateMapping,
  TEMPLATE_KINDS,
  type TemplateCatalogue,
  TemplateKind,
  templateLanguageKey,
  withTemplate,
} from '../domain/message-templates.ts';
import type { TemplateFile } from './reader.ts';

export const TWILIO_CONTENT_SID_PREFIX = 'TWILIO_CONTENT_SID_';
const CONTENT_SID = /^HX[0-9a-fA-F]{32}$/;
/** Meta's template names: lower-case letters, digits and underscores. */
const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;

/** An approved template of the WhatsApp Business Account: its name and language code (`en_US`, `es`, `pt_BR`). */
export interface WhatsAppTemplate {
  name: string;
  language: string;
}

function fileEntries<T>(
  file: TemplateFile | undefined,
  readTemplate: (value: unknown, language: string) => T | { problem: string },
  problems: string[],
): TemplateCatalogue<T> {
  if (!file) return {};
  if (file.error !== undefined) {
    problems.push(`${file.variable}: cannot read ${file.path}: ${file.error}`);
    return {};
  }
  const parsed = parseTemplateMapping(file.json, readTemplate);
  for (const problem of parsed.problems) problems.push(`${file.variable} (${file.path}): ${problem}`);
  return parsed.catalogue;
}

function merged<T>(settings: TemplateCatalogue<T>, file: TemplateCatalogue<T>): TemplateCatalogue<T> {
  let catalogue = settings;
  for (const kind of TEMPLATE_KINDS) {
    for (const [language, template] of Object.entries(file[kind] ?? {})) {
      catalogue = withTemplate(catalogue, kind, language, template);
    }
  }
  return catalogue;
}

/** The WhatsApp Cloud API's templates beyond `WHATSAPP_CLOUD_TEMPLATE_NAME`; undefined when none is set. */
export function whatsAppTemplateSettings(
  input: {
    donePollTemplate: string | undefined;
    intensityPollTemplate: string | undefined;
    templateLanguage: string;
    file: TemplateFile | undefined;
  },
  problems: string[],
): TemplateCatalogue<WhatsAppTemplate> | undefined {
  let settings: TemplateCatalogue<WhatsAppTemplate> = {};
  for (const [variable, kind, name] of [
    ['WHATSAPP_CLOUD_DONE_POLL_TEMPLATE_NAME', TemplateKind.DONE_POLL, input.donePollTemplate],
    ['WHATSAPP_CLOUD_INTENSITY_POLL_TEMPLATE_NAME', TemplateKind.INTENSITY_POLL, input.intensityPollTemplate],
  ] as const) {
    if (name === undefined) continue;
    if (!TEMPLATE_NAME.test(name))
      problems.push(`${variable} must be a template name such as done_check (got "${name}")`);
    else settings = withTemplate(settings, kind, ANY_LANGUAGE, { name, language: input.templateLanguage });
  }
  const file = fileEntries<WhatsAppTemplate>(
    input.file,
    (value, language) => {
      const fallbackLanguage = language === ANY_LANGUAGE ? input.templateLanguage : language.replaceAll('-', '_');
      const { name, language: code } =
        typeof value === 'string'
          ? { name: value, language: fallbackLanguage }
          : ((value ?? {}) as { name?: unknown; language?: unknown });
      if (typeof name !== 'string' || !TEMPLATE_NAME.test(name)) {
        return { problem: 'must be a template name such as "study_message", or {"name": …, "language": "en_US"}' };
      }
      if (code !== undefined && (typeof code !== 'string' || !/^[a-z]{2,3}(_[A-Za-z]{2,4})?$/.test(code))) {
        return {
          problem: `language must be a WhatsApp language code such as en_US or es (got ${JSON.stringify(code)})`,
        };
      }
      return { name, language: typeof code === 'string' ? code : fallbackLanguage };
    },
    problems,
  );
  const catalogue = merged(settings, file);
  return Object.keys(catalogue).length > 0 ? catalogue : undefined;
}

/** Twilio's Content Templates from `TWILIO_CONTENT_SID_*` and the mapping file; undefined when none is set. */
export function twilioContentTemplateSettings(
  input: { contentSids: readonly (readonly [string, string])[]; file: TemplateFile | undefined },
  problems: string[],
): TemplateCatalogue<string> | undefined {
  let settings: TemplateCatalogue<string> = {};
  // Longest first: `INTENSITY_POLL_ES` must not be read as kind `INTENSITY` in language `POLL-ES`.
  const kinds = [...TEMPLATE_KINDS].sort((a, b) => b.length - a.length);
  for (const [variable, value] of input.contentSids) {
    const rest = variable.slice(TWILIO_CONTENT_SID_PREFIX.length);
    const kind = kinds.find(
      (candidate) => rest === candidate.toUpperCase() || rest.startsWith(`${candidate.toUpperCase()}_`),
    );
    if (!kind) {
      problems.push(
        `${variable}: the kind must be one of ${TEMPLATE_KINDS.map((name) => name.toUpperCase()).join(', ')}`,
      );
      continue;
    }
    const languageText = rest.slice(kind.length + 1).replaceAll('_', '-');
    const language = languageText === '' ? ANY_LANGUAGE : templateLanguageKey(languageText);
    if (!language || (language === ANY_LANGUAGE && languageText !== '')) {
      problems.push(`${variable}: "${languageText}" is not a language tag (such as ES or PT_BR)`);
      continue;
    }
    if (!CONTENT_SID.test(value)) {
      problems.push(`${variable} must be a Content SID: HX and 32 hexadecimal digits (got "${value}")`);
      continue;
    }
    settings = withTemplate(settings, kind, language, value);
  }
  const file = fileEntries<string>(
    input.file,
    (value) =>
      typeof value === 'string' && CONTENT_SID.test(value)
        ? value
        : { problem: 'must be a Content SID: HX and 32 hexadecimal digits' },
    problems,
  );
  const catalogue = merged(settings, file);
  return Object.keys(catalogue).length > 0 ? catalogue : undefined;
}
