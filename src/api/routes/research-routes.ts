/** The research endpoints: export (more to come in this file's siblings). */
import type { FastifyInstance } from 'fastify';
import type { BroadcastService } from '../../research/broadcasts/broadcast-service.ts';
import type { ImportService } from '../../research/import/import-service.ts';
import { registerBroadcastRoutes } from './broadcast-routes.ts';
import { type ExportRouteOptions, registerExportRoutes } from './export-routes.ts';
import { registerImportRoutes } from './import-routes.ts';
import type { ChatUrlFor } from './participant-routes.ts';
import { registerStatsRoutes } from './stats-routes.ts';

export interface ResearchRouteOptions {
  export: ExportRouteOptions;
  imports?: ImportService;
  broadcasts?: { service: BroadcastService; ratePerMinute: number };
  /** With the web-chat channel: `chat_url` of each participant the bulk import enrolled. */
  chatUrlFor?: ChatUrlFor | undefined;
}

export function registerResearchRoutes(app: FastifyInstance, options: ResearchRouteOptions): void {
  registerExportRoutes(app, options.export);
  registerStatsRoutes(app, { store: options.export.store });
  if (options.imports) registerImportRoutes(app, { imports: options.imports, chatUrlFor: options.chatUrlFor });
  if (options.broadcasts) {
    registerBroadcastRoutes(app, {
      broadcasts: options.broadcasts.service,
      ratePerMinute: options.broadcasts.ratePerMinute,
    });
  }
}
