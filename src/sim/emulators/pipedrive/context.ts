import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorReply } from '../server.ts';
import { pipedriveErrors } from './errors.ts';
import type { CostClass } from './rate-limit.ts';
import type { PipedriveStore } from './store.ts';

/** What every Pipedrive route group gets: the store, and `run` (outage, token, limits, faults, then the handler). */
export interface PipedriveRouteContext {
  store: PipedriveStore;
  run(
    route: string,
    req: FastifyRequest,
    reply: FastifyReply,
    cost: { api: 'v1' | 'v2'; kind: CostClass },
    /** The id of the user the token belongs to: the author of what the request changes. */
    handler: (userId: number) => EmulatorReply,
  ): Promise<FastifyReply>;
}

export type Query = Record<string, string>;

/**
 * The query, refusing parameters the endpoint does not take (the emulator is strict so that a
 * connector sending a misspelt parameter learns it here, not in production where Pipedrive may
 * ignore it) and repeated ones.
 */
export function strictQuery(req: FastifyRequest, allowed: readonly string[]): Query | EmulatorReply {
  const out: Query = {};
  for (const [k, v] of Object.entries(req.query as Record<string, string | string[]>)) {
    if (!allowed.includes(k)) return pipedriveErrors.badRequestV2(`Unknown query parameter '${k}' (the emulator takes ${allowed.join(', ')})`);
    if (Array.isArray(v)) return pipedriveErrors.badRequestV2(`Query parameter '${k}' is repeated`);
    out[k] = v;
  }
  return out;
}

export function isReply(x: unknown): x is EmulatorReply {
  return typeof x === 'object' && x !== null && typeof (x as EmulatorReply).status === 'number' && 'body' in x;
}

/** A JSON object body as Fastify parsed it; anything else is null. */
export function jsonObject(req: FastifyRequest): Record<string, unknown> | null {
  const b = req.body;
  return typeof b === 'object' && b !== null && !Array.isArray(b) && !Buffer.isBuffer(b) ? (b as Record<string, unknown>) : null;
}

/** A positive integer id from a query or path value; null when it is not one. */
export function intParam(v: string | undefined): number | null {
  return v !== undefined && /^[1-9]\d{0,9}$/.test(v) ? Number(v) : null;
}
