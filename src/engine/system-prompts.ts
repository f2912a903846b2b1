/**
 * The three system prompts. Built-in defaults live in `prompts/`; `INTAKE_BOT_PROMPT_FILE`,
 * `FEEDBACK_TRACKER_PROMPT_FILE` and `PROMPT_GENERATOR_PROMPT_FILE` override them. Read once at start-up: a missing
 * or empty override file is a start-up error, not a silent fallback. Per-language versions (`prompts/es/intake.txt`)
 * are found beside the effective file, see `loadLanguageSystemPrompts`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { AppError } from '../domain/errors.ts';
import { canonicalLanguageTag, languageFallbackChain } from '../domain/language.ts';

export interface SystemPrompts {
  intake: string;
  feedback: string;
  promptGenerator: string;
}

export const BUILT_IN_PROMPTS_DIRECTORY = join(import.meta.dirname, '..', '..', 'prompts');

function readPrompt(path: string, setting: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new AppError('invalid_input', `${setting}: cannot read prompt file "${path}"`, { cause: error });
  }
  if (!text) throw new AppError('invalid_input', `${setting}: prompt file "${path}" is empty`);
  return text;
}

export function loadSystemPrompts(overrides: {
  intakeFile?: string | undefined;
  feedbackFile?: string | undefined;
  promptGeneratorFile?: string | undefined;
}): SystemPrompts {
  const builtIn = (name: string) => join(BUILT_IN_PROMPTS_DIRECTORY, name);
  return {
    intake: readPrompt(overrides.intakeFile ?? builtIn('intake.txt'), 'INTAKE_BOT_PROMPT_FILE'),
    feedback: readPrompt(overrides.feedbackFile ?? builtIn('feedback.txt'), 'FEEDBACK_TRACKER_PROMPT_FILE'),
    promptGenerator: readPrompt(
      overrides.promptGeneratorFile ?? builtIn('prompt-generator.txt'),
      'PROMPT_GENERATOR_PROMPT_FILE',
    ),
  };
}

/** A prompt's text and the file it came from (the prompt version names the file). */
export interface PromptSource {
  text: string;
  file: string;
}

/** Per-language versions of one prompt, by canonical language tag. */
export type LanguagePrompts = ReadonlyMap<string, PromptSource>;

export interface LanguageSystemPrompts {
  intake: LanguagePrompts;
  feedback: LanguagePrompts;
  promptGenerator: LanguagePrompts;
}

/**
 * A study's per-language prompt files: beside the effective default file `<dir>/<name>`, every `<dir>/<tag>/<name>`
 * whose folder is a language tag (`prompts/es/intake.txt`). A language without its own file uses the default file;
 * the context builder adds the language instruction either way. Read once at start-up; an empty file is an error.
 */
function findLanguagePrompts(defaultFile: string, setting: string): Map<string, PromptSource> {
  const found = new Map<string, PromptSource>();
  const directory = dirname(defaultFile);
  const name = basename(defaultFile);
  let folders: string[];
  try {
    folders = readdirSync(directory, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return found;
  }
  for (const folder of folders) {
    const language = canonicalLanguageTag(folder);
    const file = join(directory, folder, name);
    if (!language || !existsSync(file)) continue;
    found.set(language, { text: readPrompt(file, `${setting} (${language})`), file });
  }
  return found;
}

export function loadLanguageSystemPrompts(overrides: {
  intakeFile?: string | undefined;
  feedbackFile?: string | undefined;
  promptGeneratorFile?: string | undefined;
}): LanguageSystemPrompts {
  const builtIn = (name: string) => join(BUILT_IN_PROMPTS_DIRECTORY, name);
  return {
    intake: findLanguagePrompts(overrides.intakeFile ?? builtIn('intake.txt'), 'INTAKE_BOT_PROMPT_FILE'),
    feedback: findLanguagePrompts(overrides.feedbackFile ?? builtIn('feedback.txt'), 'FEEDBACK_TRACKER_PROMPT_FILE'),
    promptGenerator: findLanguagePrompts(
      overrides.promptGeneratorFile ?? builtIn('prompt-generator.txt'),
      'PROMPT_GENERATOR_PROMPT_FILE',
    ),
  };
}

/** The prompt for a language: its own file (`es-MX`, then `es`), else the default text. */
export function systemPromptFor(
  defaultText: string,
  languagePrompts: LanguagePrompts | undefined,
  language: string,
): string {
  if (!languagePrompts || languagePrompts.size === 0) return defaultText;
  for (const candidate of languageFallbackChain(language)) {
    const prompt = languagePrompts.get(candidate);
    if (prompt) return prompt.text;
  }
  return defaultText;
}

/**
 * What one participant's requests use instead of the study-wide defaults (a trial arm's prompt directory, its tone
 * adaptation switched off). `purpose` is the request's purpose: `intake`, `feedback` or `prompt-generator`.
 */
export interface ParticipantPromptSettings {
  /** The participant's system prompt for this purpose, with its per-language versions; absent: the default. */
  systemPrompt?: { text: string; languagePrompts: LanguagePrompts };
  /** False: the tone tags are neither updated nor put in the request. */
  toneAdaptation: boolean;
}

export type PromptSettingsSource = (
  participantId: string,
  purpose: string,
) => Promise<ParticipantPromptSettings | undefined>;

/** The system prompt a participant gets for a purpose: the settings' own (per language), else the defaults. */
export function participantSystemPrompt(
  settings: ParticipantPromptSettings | undefined,
  defaults: { text: string; languagePrompts: LanguagePrompts | undefined },
  language: string,
): string {
  const source = settings?.systemPrompt ?? defaults;
  return systemPromptFor(source.text, source.languagePrompts, language);
}

/**
 * Reads a directory's versions of the three prompts (`<dir>/intake.txt`, `<dir>/es/intake.txt`, …) with the same
 * per-language layout as the defaults. A prompt the directory lacks is absent (the default is used); a directory with
 * none of them, or an empty file, is an error naming `setting`.
 */
export function loadPromptDirectory(
  directory: string,
  setting: string,
): Partial<Record<'intake' | 'feedback' | 'prompt-generator', { text: string; languagePrompts: LanguagePrompts }>> {
  const found: Partial<
    Record<'intake' | 'feedback' | 'prompt-generator', { text: string; languagePrompts: LanguagePrompts }>
  > = {};
  for (const purpose of ['intake', 'feedback', 'prompt-generator'] as const) {
    const file = join(directory, `${purpose}.txt`);
    if (!existsSync(file)) continue;
    found[purpose] = { text: readPrompt(file, setting), languagePrompts: findLanguagePrompts(file, setting) };
  }
  if (Object.keys(found).length === 0) {
    throw new AppError(
      'invalid_input',
      `${setting}: "${directory}" holds none of intake.txt, feedback.txt, prompt-generator.txt`,
    );
  }
  return found;
}
