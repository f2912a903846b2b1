/**
 * The pages' stylesheet, scripts and icon (`/dashboard/assets/<file>`), and `/favicon.ico`, which browsers fetch on
 * their own for any page of the origin (a JSON response, the chat's "link not valid" page). All public: they hold
 * nothing of the study, and a 401 there is a console error on every page.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.ts';

/**
 * The assets, from the source tree whether this module runs from `src/`, from the compiled `dist/` or from the bundle
 * in `dist/bundle/` (`npm start`): all sit two levels below the package root, like the prompts directory.
 */
const ASSETS = pathToFileURL(join(import.meta.dirname, '..', '..', 'src', 'web', 'assets', '/'));

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  'dashboard.css': 'text/css; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'chat.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
  'favicon.ico': 'image/x-icon',
};

export function registerAssetRoutes(app: FastifyInstance): void {
  const publicRoute = { config: { public: true } };
  const send = async (file: string) => readFile(new URL(file, ASSETS));

  app.get('/dashboard/assets/:file', publicRoute, async (request, reply) => {
    const { file } = request.params as { file: string };
    const type = CONTENT_TYPES[file];
    if (!type) throw new AppError('not_found', `asset ${file} not found`);
    return reply.header('content-type', type).send(await send(file));
  });
  app.get('/favicon.ico', publicRoute, async (_request, reply) =>
    reply
      .header('content-type', CONTENT_TYPES['favicon.ico'])
      .header('cache-control', 'public, max-age=86400')
      .send(await send('favicon.ico')),
  );
}
