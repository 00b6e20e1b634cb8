import type { FastifyInstance } from 'fastify';
import { queryValue, type TwentyRouteContext } from '../context.ts';

/**
 * Saved views over the REST metadata API (views.ts):
 *
 *   GET /rest/metadata/views?objectMetadataId=<id>   → 200 [ViewDto, ...]
 *   GET /rest/metadata/viewFilters?viewId=<id>       → 200 [ViewFilterDto, ...]
 *
 * Both answer a bare array (the controllers return the DTO arrays; Twenty wraps nothing). Without
 * the query parameter: every view (filter) of the workspace. Route names: 'metadata.views.list',
 * 'metadata.viewFilters.list'.
 */
export function registerViewRoutes(app: FastifyInstance, ctx: TwentyRouteContext): void {
  app.get('/rest/metadata/views', (req, reply) =>
    ctx.run('metadata.views.list', req, reply, () => ({ status: 200, body: ctx.store.views.list(queryValue(req, 'objectMetadataId')) })),
  );
  app.get('/rest/metadata/viewFilters', (req, reply) =>
    ctx.run('metadata.viewFilters.list', req, reply, () => ({ status: 200, body: ctx.store.views.filtersOf(queryValue(req, 'viewId')) })),
  );
}
