/**
 * `MESSAGE_CATALOGUE_DIR`: a study's own catalogues, `<tag>.json` each (for example `pt-BR.json`, or `es.json` to
 * reword the built-in Spanish). A file's keys override the built-in catalogue of its language; what it lacks comes
 * from that built-in catalogue, then English. Read once at start-up; an unreadable file or a file name that is not a
 * language tag is a start-up error.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AppError } from '../domain/errors.ts';
import { canonicalLanguageTag } from '../domain/language.ts';
import type { RawCatalogue } from './message-catalogue.ts';

export function readCatalogueDirectory(directory: string): Record<string, RawCatalogue> {
  let files: string[];
  try {
    files = readdirSync(directory).filter((file) => file.endsWith('.json'));
  } catch (error) {
    throw new AppError('invalid_input', `MESSAGE_CATALOGUE_DIR: cannot read directory "${directory}"`, {
      cause: error,
    });
  }
  const catalogues: Record<string, RawCatalogue> = {};
  for (const file of files) {
    const tag = canonicalLanguageTag(basename(file, '.json'));
    if (!tag) {
      throw new AppError('invalid_input', `MESSAGE_CATALOGUE_DIR: "${file}" is not named after a BCP 47 language tag`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(join(directory, file), 'utf8'));
    } catch (error) {
      throw new AppError('invalid_input', `MESSAGE_CATALOGUE_DIR: "${file}" is not valid JSON`, { cause: error });
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new AppError('invalid_input', `MESSAGE_CATALOGUE_DIR: "${file}" must be a JSON object of key → text`);
    }
    catalogues[tag] = parsed as RawCatalogue;
  }
  return catalogues;
}

/** Built-in catalogues with a study's files laid over them, language by language. */
export function mergeCatalogues(
  base: Readonly<Record<string, RawCatalogue>>,
  overlay: Readonly<Record<string, RawCatalogue>>,
): Record<string, RawCatalogue> {
  const merged: Record<string, RawCatalogue> = { ...base };
  for (const [language, entries] of Object.entries(overlay)) merged[language] = { ...base[language], ...entries };
  return merged;
}
