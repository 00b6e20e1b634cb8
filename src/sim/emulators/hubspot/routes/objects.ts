import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EmulatorReply } from '../../server.ts';
import { forType, jsonBody, type HubSpotRouteContext, type ObjectTypeParams } from '../context.ts';
import { hubspotErrors } from '../errors.ts';
import type { ObjectType } from '../schema.ts';
import { publicObject, type HubSpotStore } from '../store.ts';
import { runSearch } from '../search.ts';
import { checkCreate, createInputSchema, shapeError, type Checked, type CreateInput } from '../validate.ts';

/**
 * The objects API (/crm/v3/objects/{objectType}) for contacts and the four engagements: create,
 * batch create and search. Route names for faults: `<objectType>.create`, `<objectType>.batchCreate`,
 * `<objectType>.search` (e.g. `notes.batchCreate`, `contacts.search`).
 */

/** Documented batch limit: 100 inputs per request. */
export const maxBatchInputs = 100;

const batchSchema = z.object({ inputs: z.array(z.unknown()) }).strict();

export function registerObjectRoutes(app: FastifyInstance, ctx: HubSpotRouteContext): void {
  app.post<ObjectTypeParams>('/crm/v3/objects/:objectType', (req, reply) =>
    ctx.run(`${req.params.objectType}.create`, req, reply, () =>
      forType(req.params.objectType, (type) => {
        const parsed = createInputSchema.safeParse(jsonBody(req));
        if (!parsed.success) return shapeError(parsed.error);
        const checked = checkInput(ctx.store, type, parsed.data);
        if (!checked.ok) return checked.reply;
        return { status: 201, body: publicObject(ctx.store.create(type, checked.properties, checked.associations)) };
      }),
    ),
  );

  app.post<ObjectTypeParams>('/crm/v3/objects/:objectType/batch/create', (req, reply) =>
    ctx.run(`${req.params.objectType}.batchCreate`, req, reply, () => forType(req.params.objectType, (type) => batchCreate(ctx.store, type, jsonBody(req)))),
  );

  app.post<ObjectTypeParams>('/crm/v3/objects/:objectType/search', (req, reply) =>
    ctx.run(`${req.params.objectType}.search`, req, reply, () => forType(req.params.objectType, (type) => runSearch(ctx.store, type, jsonBody(req), ctx.searchLagMs)), {
      search: true,
    }),
  );
}

/** checkCreate, and for contacts the unique address (409 CONFLICT naming the existing id, as documented). */
function checkInput(store: HubSpotStore, type: ObjectType, input: CreateInput): Checked {
  const checked = checkCreate(store, type, input);
  if (!checked.ok || type !== 'contacts' || checked.properties.email === undefined) return checked;
  const existing = store.contactByEmail(checked.properties.email);
  return existing ? { ok: false, reply: hubspotErrors.contactExists(existing.id) } : checked;
}

/**
 * All or nothing, unless every input carries its own objectWriteTraceId: then HubSpot's
 * multi-status handling (error-handling guide) creates the valid inputs and answers 207 with one
 * error per refused input, naming it by `context.objectWriteTraceId`. A malformed request (its JSON
 * shape, too many inputs) is refused whole either way.
 */
function batchCreate(store: HubSpotStore, type: ObjectType, body: unknown): EmulatorReply {
  const batch = batchSchema.safeParse(body);
  if (!batch.success) return shapeError(batch.error);
  const { inputs: raw } = batch.data;
  if (raw.length > maxBatchInputs) return hubspotErrors.tooManyInputs(raw.length, maxBatchInputs);
  const inputs: CreateInput[] = [];
  for (const [i, r] of raw.entries()) {
    const parsed = createInputSchema.safeParse(r);
    if (!parsed.success) return shapeError(parsed.error, ['inputs', i]);
    inputs.push(parsed.data);
  }
  const traceIds = inputs.map((i) => i.objectWriteTraceId);
  const traced = inputs.length > 0 && traceIds.every((t) => t !== undefined) && new Set(traceIds).size === inputs.length;
  const startedAt = new Date(store.clock.now()).toISOString();
  // Each input is checked against the store as it was before the batch (two inputs with the same
  // contact address would both pass; the emulator serves engagements, where that cannot arise).
  const checks = inputs.map((i) => checkInput(store, type, i));
  const refused = checks.flatMap((c, i) => (c.ok ? [] : [{ reply: c.reply, traceId: traceIds[i] }]));
  if (refused.length > 0 && !traced) return refused[0]!.reply;
  const results = checks.flatMap((c, i) => {
    if (!c.ok) return [];
    const created = publicObject(store.create(type, c.properties, c.associations));
    return [traced ? { ...created, objectWriteTraceId: traceIds[i] } : created];
  });
  const out: Record<string, unknown> = { status: 'COMPLETE', results, startedAt, completedAt: new Date(store.clock.now()).toISOString() };
  if (refused.length === 0) return { status: 201, body: out };
  out.numErrors = refused.length;
  out.errors = refused.map(({ reply, traceId }) => {
    const b = reply.body as { category: string; message: string };
    return { status: 'error', category: b.category, message: b.message, context: { objectWriteTraceId: [traceId!] } };
  });
  return { status: 207, body: out };
}
