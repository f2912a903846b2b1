/** The research endpoints: export (more to come in this file's siblings). */
import type { FastifyInstance } from 'fastify';
import type { ImportService } from '../../research/import/import-service.ts';
import { type ExportRouteOptions, registerExportRoutes } from './export-routes.ts';
import { registerImportRoutes } from './import-routes.ts';

export interface ResearchRouteOptions {
  export: ExportRouteOptions;
  imports?: ImportService;
}

export function registerResearchRoutes(app: FastifyInstance, options: ResearchRouteOptions): void {
  registerExportRoutes(app, options.export);
  if (options.imports) registerImportRoutes(app, { imports: options.imports });
}
