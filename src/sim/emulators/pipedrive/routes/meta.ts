import type { FastifyInstance } from 'fastify';
import { isReply, jsonObject, strictQuery, type PipedriveRouteContext } from '../context.ts';
import { pipedriveErrors } from '../errors.ts';
import { rfc3339, standardPersonFieldNames } from '../store.ts';

/**
 * API v1 endpoints without a v2 counterpart the connector needs:
 *
 *   GET  /v1/users/me          the token's user ({data: {id, name, email, company_id, …}})
 *   GET  /v1/users             every user of the company
 *   GET  /v1/personFields      standard and custom person fields ({key, name, field_type, edit_flag})
 *   POST /v1/personFields      {name, field_type} → a custom field with a 40-character hash key.
 *                              Pipedrive does not refuse a second field with the same name: it
 *                              creates another (so a client must look before it creates).
 *   GET  /v1/filters?type=people
 *
 * v1 lists page with start/limit and additional_data.pagination.more_items_in_collection; the
 * emulator answers everything on one page (start=0) and says so.
 *
 * Route names for faults: 'users.me', 'users.list', 'personFields.list', 'personFields.create', 'filters.list'.
 */
const fieldTypes = new Set(['varchar', 'text', 'date', 'double']);
const onePage = { pagination: { start: 0, limit: 500, more_items_in_collection: false } };

export function registerMetaRoutes(app: FastifyInstance, ctx: PipedriveRouteContext, companyId: number): void {
  app.get('/v1/users/me', (req, reply) =>
    ctx.run('users.me', req, reply, { api: 'v1', kind: 'get' }, (userId) => {
      const u = ctx.store.users.find((x) => x.id === userId)!;
      return { status: 200, body: { success: true, data: { id: u.id, name: u.name, email: u.email, company_id: companyId, active_flag: true, is_admin: 1 } } };
    }),
  );

  app.get('/v1/users', (req, reply) =>
    ctx.run('users.list', req, reply, { api: 'v1', kind: 'list' }, () => ({
      status: 200,
      body: { success: true, data: ctx.store.users.map((u) => ({ id: u.id, name: u.name, email: u.email, active_flag: true })), additional_data: onePage },
    })),
  );

  app.get('/v1/personFields', (req, reply) =>
    ctx.run('personFields.list', req, reply, { api: 'v1', kind: 'list' }, () => {
      const q = strictQuery(req, ['start', 'limit']);
      if (isReply(q)) return q;
      if ((q.start ?? '0') !== '0') return pipedriveErrors.notImplemented('personFields start > 0');
      const standard = standardPersonFieldNames.map((key, i) => ({ id: 9000 + i, key, name: key, field_type: 'varchar', edit_flag: false }));
      const custom = ctx.store.personFields.map((f) => ({ ...f, add_time: rfc3339(f.add_time) }));
      return { status: 200, body: { success: true, data: [...standard, ...custom], additional_data: onePage } };
    }),
  );

  app.post('/v1/personFields', (req, reply) =>
    ctx.run('personFields.create', req, reply, { api: 'v1', kind: 'mutate' }, () => {
      const body = jsonObject(req);
      if (!body) return pipedriveErrors.badRequestV1('The body must be a JSON object');
      for (const k of Object.keys(body)) if (!['name', 'field_type', 'add_visible_flag'].includes(k)) return pipedriveErrors.badRequestV1(`Unknown parameter '${k}'`);
      if (typeof body.name !== 'string' || body.name.trim() === '') return pipedriveErrors.badRequestV1('Field name is required');
      if (typeof body.field_type !== 'string' || !fieldTypes.has(body.field_type)) return pipedriveErrors.badRequestV1(`Invalid field_type '${String(body.field_type)}' (the emulator serves ${[...fieldTypes].join(', ')})`);
      const f = ctx.store.addPersonField(body.name, body.field_type);
      return { status: 200, body: { success: true, data: { ...f, add_time: rfc3339(f.add_time) } } };
    }),
  );

  app.get('/v1/filters', (req, reply) =>
    ctx.run('filters.list', req, reply, { api: 'v1', kind: 'list' }, () => {
      const q = strictQuery(req, ['type']);
      if (isReply(q)) return q;
      if (q.type !== undefined && q.type !== 'people') return pipedriveErrors.notImplemented(`filters of type ${q.type}`);
      const data = ctx.store.filters.map((f) => ({ id: f.id, name: f.name, type: 'people', active_flag: true, visible_to: '3' }));
      return { status: 200, body: { success: true, data } };
    }),
  );
}
