import type { FastifyInstance } from 'fastify';
import { forObject, queryValue, type SalesforceRouteContext, type VersionParams } from '../context.ts';
import { sfError, sfErrors } from '../errors.ts';
import type { SalesforceStore, SRecord } from '../store.ts';

/**
 * List views (REST API Developer Guide, "List Views" and "List View Results"):
 *
 *   GET /sobjects/{object}/listviews                        {done, listviews: [{id, label, developerName, resultsUrl, …}], size}
 *   GET /sobjects/{object}/listviews/{id}/results?limit=&offset=
 *       {columns, id, label, developerName, done, size, records: [{columns: [{fieldNameOrPath, value}]}]}
 *
 * `limit` is 1–2000 (default 25), `offset` 0–2000 (documented ranges). Values come as strings (or
 * null), as the results resource sends them. The emulator's views are on Contact only; their
 * columns are the default "All Contacts" ones plus the hidden Id and SystemModstamp.
 *
 * Route names for faults: `listviews.list`, `listviews.results`.
 */
type Params = { Params: VersionParams & { object: string } };

const columns: Array<{ fieldNameOrPath: string; label: string; hidden: boolean }> = [
  { fieldNameOrPath: 'Name', label: 'Name', hidden: false },
  { fieldNameOrPath: 'Account.Name', label: 'Account Name', hidden: false },
  { fieldNameOrPath: 'Title', label: 'Title', hidden: false },
  { fieldNameOrPath: 'Phone', label: 'Phone', hidden: false },
  { fieldNameOrPath: 'Email', label: 'Email', hidden: false },
  { fieldNameOrPath: 'Id', label: 'Contact ID', hidden: true },
  { fieldNameOrPath: 'SystemModstamp', label: 'System Modstamp', hidden: true },
];

export function registerListViewRoutes(app: FastifyInstance, ctx: SalesforceRouteContext): void {
  app.get<Params>('/services/data/:version/sobjects/:object/listviews', (req, reply) =>
    ctx.run('listviews.list', req, reply, () =>
      forObject(req.params.version, req.params.object, (o, base) => {
        const views = ctx.store.listViews.filter((v) => v.sobjectType === o);
        return {
          status: 200,
          body: {
            done: true,
            nextRecordsUrl: null,
            size: views.length,
            sobjectType: o,
            listviews: views.map((v) => ({
              id: v.id,
              label: v.label,
              developerName: v.developerName,
              soqlCompatible: true,
              sobjectType: o,
              url: `${base}/sobjects/${o}/listviews/${v.id}`,
              describeUrl: `${base}/sobjects/${o}/listviews/${v.id}/describe`,
              resultsUrl: `${base}/sobjects/${o}/listviews/${v.id}/results`,
            })),
          },
        };
      }),
    ),
  );

  app.get<{ Params: VersionParams & { object: string; id: string } }>('/services/data/:version/sobjects/:object/listviews/:id/results', (req, reply) =>
    ctx.run('listviews.results', req, reply, () =>
      forObject(req.params.version, req.params.object, (o) => {
        const view = ctx.store.listViews.find((v) => v.sobjectType === o && v.id.slice(0, 15) === req.params.id.slice(0, 15));
        if (!view) return sfErrors.notFound();
        const limit = int(queryValue(req, 'limit'), 25);
        const offset = int(queryValue(req, 'offset'), 0);
        if (limit === null || limit < 1 || limit > 2000) return sfError(400, 'INVALID_QUERY_PARAMETER_VALUE', 'limit must be between 1 and 2000');
        if (offset === null || offset < 0 || offset > 2000) return sfError(400, 'INVALID_QUERY_PARAMETER_VALUE', 'offset must be between 0 and 2000');
        const all = ctx.store.all('Contact').filter((c) => !c.IsDeleted && view.filter(c));
        const rows = all.slice(offset, offset + limit);
        return {
          status: 200,
          body: {
            columns: columns.map((c) => ({ ...c, sortable: true, type: c.fieldNameOrPath === 'Id' ? 'id' : 'string' })),
            developerName: view.developerName,
            id: view.id,
            label: view.label,
            done: offset + rows.length >= all.length,
            size: all.length,
            records: rows.map((c) => ({ columns: columns.map((col) => ({ fieldNameOrPath: col.fieldNameOrPath, value: cell(ctx.store, c, col.fieldNameOrPath) })) })),
          },
        };
      }),
    ),
  );
}

function int(v: string | undefined, dflt: number): number | null {
  if (v === undefined) return dflt;
  return /^\d+$/.test(v) ? Number(v) : null;
}

function cell(store: SalesforceStore, c: SRecord, path: string): string | null {
  if (path === 'Name') return [c.FirstName, c.LastName].filter((x) => typeof x === 'string' && x).join(' ') || null;
  if (path === 'Account.Name') {
    const a = typeof c.AccountId === 'string' ? store.get('Account', c.AccountId) : undefined;
    return (a?.Name as string | undefined) ?? null;
  }
  const v = c[path];
  return v === null || v === undefined ? null : String(v);
}
