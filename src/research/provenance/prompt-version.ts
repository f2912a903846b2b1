/**
 * Prompt versions: a short hash of the system prompt text actually sent, plus the prompt file it came from, so a
 * study can say which wording produced a reply even after the file was edited.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';

/** A loaded prompt file: its file name (no directory) and the text read from it. */
export interface PromptSource {
  file: string;
  text: string;
}

/** 12 hex characters of SHA-256: short enough to read, long enough never to collide within a study. */
export function promptVersion(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 12);
}

/** The prompt files of a configuration, with their file names. */
export function promptSources(prompts: readonly { path: string; text: string }[]): PromptSource[] {
  return prompts.map((prompt) => ({ file: basename(prompt.path), text: prompt.text }));
}

/**
 * A study's per-language prompt files as provenance sources, named `<language>/<file>` (`es/intake.txt`), so the
 * start-up record lists their versions and each LLM call names the file its system message used.
 */
export function languagePromptSources(
  byLanguage: Iterable<ReadonlyMap<string, { file: string; text: string }>>,
): PromptSource[] {
  const sources: PromptSource[] = [];
  for (const prompts of byLanguage) {
    for (const [language, prompt] of prompts)
      sources.push({ file: `${language}/${basename(prompt.file)}`, text: prompt.text });
  }
  return sources;
}

/** The file whose text the system message contains (the longest match wins), or undefined. */
export function promptFileOf(systemText: string, sources: readonly PromptSource[]): string | undefined {
  let best: PromptSource | undefined;
  for (const source of sources) {
    if (source.text && systemText.includes(source.text) && source.text.length > (best?.text.length ?? 0)) {
      best = source;
    }
  }
  return best?.file;
}
