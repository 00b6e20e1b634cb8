import type { FastifyInstance } from 'fastify';
import type { EmulatorReply } from '../../server.ts';
import { queryValue, type TwentyRouteContext } from '../context.ts';
import { twentyError, twentyErrors } from '../errors.ts';
import { FilterError } from '../filter.ts';
import { OrderError } from '../order.ts';
import { PagingError, parseLimit } from '../paging.ts';
import { unservedStandardObjects, type ObjectDef } from '../schema.ts';

/**
 * Twenty's core REST API on records (twenty-server api/rest/core/controllers/rest-api-core.controller.ts):
 *
 *   GET    /rest/<plural>          list: filter, order_by, limit, starting_after, ending_before, depth
 *                                  → 200 {data: {<plural>: [...]}, totalCount, pageInfo}
 *   POST   /rest/<plural>          create one → 201 {data: {create<Singular>: {...}}}
 *   POST   /rest/batch/<plural>    create many (at most 60, docs.twenty.com) → 201 {data: {create<Plural>: [...]}}
 *   PATCH  /rest/<plural>/<id>     update the fields given → 200 {data: {update<Singular>: {...}}}
 *   DELETE /rest/<plural>/<id>     destroy; with soft_delete=true a soft delete (deletedAt set)
 *                                  (parse-soft-delete-rest-request.util.ts) → 200 {data: {delete<Singular>: {id}}}
 *
 * Route names for fault injection: '<plural>.list', '<plural>.create', '<plural>.createMany',
 * '<plural>.update', '<plural>.delete' (e.g. 'notes.createMany', 'people.list'). The answers carry
 * the records' own fields at depth 0; relations are not nested (`depth=1`, Twenty's default, is
 * read as 0 here; the connector asks for depth 0). Writes are stamped with the API key's actor.
 */
export function registerRecordRoutes(app: FastifyInstance, ctx: TwentyRouteContext): void {
  app.get<{ Params: { object: string } }>('/rest/:object', (req, reply) =>
    ctx.run(`${req.params.object}.list`, req, reply, () =>
      withObject(ctx, req.params.object, (obj) => {
        const depth = queryValue(req, 'depth');
        if (depth !== undefined && depth !== '0' && depth !== '1') return twentyErrors.badRequest(`depth '${depth}' is invalid. Should be 0 or 1`);
        try {
          const limit = parseLimit(queryValue(req, 'limit'), ctx.pageSize.default, ctx.pageSize.max);
          const r = ctx.store.list(obj.namePlural, {
            filter: queryValue(req, 'filter'),
            orderBy: queryValue(req, 'order_by'),
            limit,
            startingAfter: queryValue(req, 'starting_after'),
            endingBefore: queryValue(req, 'ending_before'),
          });
          return { status: 200, body: { data: { [obj.namePlural]: r.records }, totalCount: r.totalCount, pageInfo: r.pageInfo } };
        } catch (e) {
          if (e instanceof FilterError || e instanceof PagingError || e instanceof OrderError) return twentyErrors.badRequest(e.message);
          throw e;
        }
      }),
    ),
  );

  app.post<{ Params: { object: string } }>('/rest/:object', (req, reply) =>
    ctx.run(`${req.params.object}.create`, req, reply, (actor) =>
      withObject(ctx, req.params.object, (obj) => {
        if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body) || Buffer.isBuffer(req.body)) {
          return twentyErrors.badRequest('Body must be an object');
        }
        const r = ctx.store.create(obj.namePlural, [req.body], actor);
        if (!r.ok) return twentyErrors.badRequest(r.message);
        return { status: 201, body: { data: { [`create${capitalize(obj.nameSingular)}`]: r.records[0] } } };
      }),
    ),
  );

  app.post<{ Params: { object: string } }>('/rest/batch/:object', (req, reply) =>
    ctx.run(`${req.params.object}.createMany`, req, reply, (actor) =>
      withObject(ctx, req.params.object, (obj) => {
        // Texts of rest-api-create-many.handler.ts.
        if (!Array.isArray(req.body)) return twentyErrors.badRequest('Body must be an array');
        if (req.body.length === 0) return twentyErrors.badRequest('Input must not be empty');
        // The documented cap; Twenty's text for it is unverified.
        if (req.body.length > ctx.batchMax) return twentyErrors.badRequest(`Maximum number of records to create is ${ctx.batchMax}`);
        const r = ctx.store.create(obj.namePlural, req.body, actor);
        if (!r.ok) return twentyErrors.badRequest(r.message);
        return { status: 201, body: { data: { [`create${capitalize(obj.namePlural)}`]: r.records } } };
      }),
    ),
  );

  app.patch<{ Params: { object: string; id: string } }>('/rest/:object/:id', (req, reply) =>
    ctx.run(`${req.params.object}.update`, req, reply, (actor) =>
      withObject(ctx, req.params.object, (obj) => {
        const r = ctx.store.update(obj.namePlural, req.params.id, req.body, actor);
        // A missing record: Twenty's text is unverified, its status 404 likewise.
        if (!r.ok) return r.status === 404 ? twentyError(404, 'NotFoundException', r.message) : twentyErrors.badRequest(r.message);
        return { status: 200, body: { data: { [`update${capitalize(obj.nameSingular)}`]: r.record } } };
      }),
    ),
  );

  app.delete<{ Params: { object: string; id: string } }>('/rest/:object/:id', (req, reply) =>
    ctx.run(`${req.params.object}.delete`, req, reply, () =>
      withObject(ctx, req.params.object, (obj) => {
        const r = ctx.store.remove(obj.namePlural, req.params.id, queryValue(req, 'soft_delete') === 'true');
        if (!r) return twentyError(404, 'NotFoundException', `Record ${req.params.id} not found`);
        return { status: 200, body: { data: { [`delete${capitalize(obj.nameSingular)}`]: { id: r.id } } } };
      }),
    ),
  );
}

/** The object a path names, or Twenty's answer for one it does not know (rest-api-base.handler.ts). */
function withObject(ctx: TwentyRouteContext, name: string, handler: (obj: ObjectDef) => EmulatorReply): EmulatorReply {
  const obj = ctx.store.objects.get(name);
  if (obj) return handler(obj);
  if (unservedStandardObjects.has(name)) return twentyErrors.notImplemented(`the object '${name}'`);
  const singular = [...ctx.store.objects.values()].find((o) => o.nameSingular === name);
  const hint = singular ? `Did you mean '${singular.namePlural}'?` : 'eg: companies';
  return twentyErrors.badRequest(`object '${name}' not found. ${hint}`);
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
