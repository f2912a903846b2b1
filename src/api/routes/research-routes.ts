/** The research endpoints: export (more to come in this file's siblings). */
import type { FastifyInstance } from 'fastify';
import { type ExportRouteOptions, registerExportRoutes } from './export-routes.ts';

export interface ResearchRouteOptions {
  export: ExportRouteOptions;
}

export function registerResearchRoutes(app: FastifyInstance, options: ResearchRouteOptions): void {
  registerExportRoutes(app, options.export);
}
