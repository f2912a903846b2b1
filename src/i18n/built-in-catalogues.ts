/**
 * The catalogues shipped in the repository. Imported statically (like the migrations), so nothing is read from
 * disk at run time; a study adds or overrides languages with `MESSAGE_CATALOGUE_DIR` (see `catalogue-directory.ts`).
 * Adding a built-in language: add `catalogues/<tag>.json` with every key of `en.json` and list it here.
 */
import english from './catalogues/en.json' with { type: 'json' };
import spanish from './catalogues/es.json' with { type: 'json' };
import { createMessageCatalogue, type MessageCatalogue, type RawCatalogue } from './message-catalogue.ts';

export function builtInCatalogues(): Record<string, RawCatalogue> {
  return { en: english, es: spanish };
}

/**
 * The built-in catalogues alone: the default of every factory that sends a fixed text, so a part built without the
 * composition root (a test, a tool) still speaks English and Spanish.
 */
export function createBuiltInMessageCatalogue(defaultLanguage?: string): MessageCatalogue {
  return createMessageCatalogue({
    catalogues: builtInCatalogues(),
    ...(defaultLanguage ? { defaultLanguage } : {}),
  }).messages;
}
