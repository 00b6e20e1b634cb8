import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorReply } from '../server.ts';
import type { Actor } from './actor.ts';
import type { TwentyStore } from './store.ts';

/** What every Twenty route group gets: the store, and `run` (outage, API key, rate limit, faults, then the handler). */
export interface TwentyRouteContext {
  store: TwentyStore;
  /** A list's page size when `limit` is absent, and the most it gives whatever `limit` asks. */
  pageSize: { default: number; max: number };
  /** The most records one /rest/batch/<object> create takes. */
  batchMax: number;
  /** The handler gets the actor of the request's API key: what its writes stamp as createdBy / updatedBy. */
  run(route: string, req: FastifyRequest, reply: FastifyReply, handler: (actor: Actor) => EmulatorReply): Promise<FastifyReply>;
}

/** One value of a query parameter (the first when it is repeated). */
export function queryValue(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[0] : v;
}
