/**
 * The start-up step of the composition root: the built-in catalogues, a study's `MESSAGE_CATALOGUE_DIR` laid over
 * them, and one warning per incomplete catalogue (its language and the keys that fall back to English).
 */
import type { Log } from '../domain/log.ts';
import { builtInCatalogues } from './built-in-catalogues.ts';
import { mergeCatalogues, readCatalogueDirectory } from './catalogue-directory.ts';
import { createMessageCatalogue, describeCatalogueProblem, type MessageCatalogue } from './message-catalogue.ts';

/** The catalogue only warns. */
export type CatalogueLog = Pick<Log, 'warn'>;

export function loadMessageCatalogue(options: {
  defaultLanguage: string;
  catalogueDir: string | undefined;
  log: CatalogueLog;
}): MessageCatalogue {
  const study = options.catalogueDir ? readCatalogueDirectory(options.catalogueDir) : {};
  const { messages, problems } = createMessageCatalogue({
    catalogues: mergeCatalogues(builtInCatalogues(), study),
    defaultLanguage: options.defaultLanguage,
  });
  for (const problem of problems) {
    options.log.warn(
      { language: problem.language, missing_keys: problem.missingKeys, unknown_keys: problem.unknownKeys },
      describeCatalogueProblem(problem),
    );
  }
  return messages;
}
