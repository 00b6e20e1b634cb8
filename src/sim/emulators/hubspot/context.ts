import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorReply } from '../server.ts';
import { hubspotErrors } from './errors.ts';
import { isObjectType, type ObjectType } from './schema.ts';
import type { HubSpotStore } from './store.ts';

/** What every HubSpot route group gets: the store, and `run` (outage, token, rate limits, faults, then the handler). */
export interface HubSpotRouteContext {
  store: HubSpotStore;
  /** The most results one query pages through (documented 10,000; search.ts). */
  searchMaxResults: number;
  /** The HubSpot user id the request's token acts as (what hs_updated_by_user_id records for its writes). */
  userIdOf(req: FastifyRequest): string;
  run(
    route: string,
    req: FastifyRequest,
    reply: FastifyReply,
    handler: () => EmulatorReply,
    /**
     * search: the search endpoints' own per-second limit, and no rate-limit headers on the answer;
     * noAuth: a route whose path carries the token (token metadata) and takes no Authorization header.
     */
    opts?: { search?: boolean; noAuth?: boolean },
  ): Promise<FastifyReply>;
}

export type ObjectTypeParams = { Params: { objectType: string } };

/** Runs `fn` for a known object type; any other name in the path gets HubSpot's 400. */
export function forType(name: string, fn: (type: ObjectType) => EmulatorReply): EmulatorReply {
  return isObjectType(name) ? fn(name) : hubspotErrors.unknownObjectType(name);
}

/** A JSON body as Fastify parsed it; anything else (bytes of another content type, nothing) is null. */
export function jsonBody(req: FastifyRequest): unknown {
  return typeof req.body === 'object' && req.body !== null && !Buffer.isBuffer(req.body) ? req.body : null;
}
