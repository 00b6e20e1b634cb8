import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorReply } from '../server.ts';
import { sfErrors } from './errors.ts';
import { isSObjectName, type SObjectName } from './schema.ts';
import type { SalesforceStore } from './store.ts';

/** What every Salesforce route group gets: the store, and `run` (outage, session, API allocation, faults, then the handler). */
export interface SalesforceRouteContext {
  store: SalesforceStore;
  /** Rows per query page before nextRecordsUrl (Salesforce: 2000 by default). */
  queryBatchSize: number;
  clock: { now(): number };
  run(route: string, req: FastifyRequest, reply: FastifyReply, handler: (userId: string) => EmulatorReply | Promise<EmulatorReply>): Promise<FastifyReply>;
}

export type VersionParams = { version: string };

/**
 * The API versions served: v46.0 (the first with sObject Collections upsert) to v62.0. Salesforce
 * answers an unknown version 404 NOT_FOUND.
 */
export function apiVersion(v: string): string | null {
  const m = /^v(\d+)\.0$/.exec(v);
  return m && Number(m[1]) >= 46 && Number(m[1]) <= 62 ? v : null;
}

export const apiBase = (version: string) => `/services/data/${version}`;

/** Runs `fn` for a served version and object; others get Salesforce's 404 / INVALID_TYPE. */
export function forObject(version: string, object: string, fn: (o: SObjectName, base: string) => EmulatorReply): EmulatorReply {
  if (!apiVersion(version)) return sfErrors.notFound();
  // Salesforce answers an object name it does not know (or the emulator does not serve) 404 NOT_FOUND.
  if (!isSObjectName(object)) return sfErrors.notFound();
  return fn(object, apiBase(version));
}

/** A JSON body as Fastify parsed it; anything else (bytes of another content type, nothing) is null. */
export function jsonBody(req: FastifyRequest): unknown {
  return typeof req.body === 'object' && req.body !== null && !Buffer.isBuffer(req.body) ? req.body : null;
}

export function queryValue(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[0] : v;
}
