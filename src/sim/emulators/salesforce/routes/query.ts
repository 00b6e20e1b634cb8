import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorReply } from '../../server.ts';
import { apiBase, apiVersion, queryValue, type SalesforceRouteContext, type VersionParams } from '../context.ts';
import { sfErrors } from '../errors.ts';
import { parseSoql, runSoql } from '../soql.ts';

/**
 * GET /services/data/vXX.X/query?q=SOQL and its continuation, nextRecordsUrl
 * (/services/data/vXX.X/query/<locator>-<offset>) (REST API Developer Guide, "Execute a SOQL
 * Query"); /queryAll?q= is the same with deleted records still in the Recycle Bin ("Execute a SOQL
 * Query that Includes Deleted Items"; its nextRecordsUrl under /query/ as well, unverified). An answer holds at most `queryBatchSize` rows (Salesforce: 2000; a test may shrink it);
 * the rest waits behind a query locator, a snapshot of the result, which lives 15 minutes after its
 * last use (documented) and then answers INVALID_QUERY_LOCATOR.
 *
 * Route names for faults: `query`, `queryAll`, `queryMore`.
 */
const locatorLifeMs = 15 * 60_000;

export function registerQueryRoutes(app: FastifyInstance, ctx: SalesforceRouteContext): void {
  const locators = new Map<string, { rows: Array<Record<string, unknown>>; usedAt: number; version: string }>();
  let n = 0;

  const page = (version: string, rows: Array<Record<string, unknown>>, offset: number, locator: string | null): EmulatorReply => {
    const end = offset + ctx.queryBatchSize;
    const done = end >= rows.length;
    return {
      status: 200,
      body: { totalSize: rows.length, done, ...(done ? {} : { nextRecordsUrl: `${apiBase(version)}/query/${locator}-${end}` }), records: rows.slice(offset, end) },
    };
  };

  const run = (all: boolean) => (req: FastifyRequest<{ Params: VersionParams }>, reply: FastifyReply) =>
    ctx.run(all ? 'queryAll' : 'query', req, reply, () => {
      const version = apiVersion(req.params.version);
      if (!version) return sfErrors.notFound();
      const q = queryValue(req, 'q');
      if (q === undefined || q.trim() === '') return sfErrors.malformedQuery('A query string has to be specified');
      const parsed = parseSoql(ctx.store, q);
      if ('status' in parsed) return parsed;
      const rows = runSoql(ctx.store, parsed, apiBase(version), all ? { now: ctx.clock.now() } : null);
      let locator: string | null = null;
      if (rows.length > ctx.queryBatchSize) {
        locator = `01g5g00000${String(++n).padStart(8, '0')}`;
        locators.set(locator, { rows, usedAt: ctx.clock.now(), version });
      }
      return page(version, rows, 0, locator);
    });
  app.get<{ Params: VersionParams }>('/services/data/:version/query', run(false));
  app.get<{ Params: VersionParams }>('/services/data/:version/queryAll', run(true));

  app.get<{ Params: VersionParams & { locator: string } }>('/services/data/:version/query/:locator', (req, reply) =>
    ctx.run('queryMore', req, reply, () => {
      const version = apiVersion(req.params.version);
      if (!version) return sfErrors.notFound();
      const m = /^(01g[0-9A-Za-z]+)-(\d+)$/.exec(req.params.locator);
      const l = m ? locators.get(m[1]!) : undefined;
      if (!m || !l || ctx.clock.now() - l.usedAt > locatorLifeMs) return sfErrors.invalidQueryLocator();
      l.usedAt = ctx.clock.now();
      return page(version, l.rows, Number(m[2]), m[1]!);
    }),
  );
}
