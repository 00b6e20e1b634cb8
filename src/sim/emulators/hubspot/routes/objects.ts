import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EmulatorReply } from '../../server.ts';
import { forType, jsonBody, type HubSpotRouteContext, type ObjectTypeParams } from '../context.ts';
import { hubspotErrors } from '../errors.ts';
import { defaultSearchProperties, type ObjectType } from '../schema.ts';
import { publicObject, type HubSpotStore } from '../store.ts';
import { runSearch } from '../search.ts';
import { checkCreate, createInputSchema, shapeError, type Checked, type CreateInput } from '../validate.ts';

/**
 * The objects API (/crm/v3/objects/{objectType}) for contacts, deals and the four engagements:
 * create, batch create, batch read, batch update and search. Route names for faults:
 * `<objectType>.create`, `<objectType>.batchCreate`, `<objectType>.batchRead`,
 * `<objectType>.batchUpdate`, `<objectType>.search` (e.g. `notes.batchCreate`, `contacts.search`).
 */

/** Documented batch limit: 100 inputs per request. */
export const maxBatchInputs = 100;

const batchSchema = z.object({ inputs: z.array(z.unknown()) }).strict();
const readSchema = z.object({ inputs: z.array(z.object({ id: z.union([z.string().min(1), z.number()]) }).strict()), properties: z.array(z.string()).optional(), propertiesWithHistory: z.array(z.string()).optional() }).strict();
const updateSchema = z.object({ inputs: z.array(z.object({ id: z.union([z.string().min(1), z.number()]), properties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])) }).strict()) }).strict();

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

  app.post<ObjectTypeParams>('/crm/v3/objects/:objectType/batch/read', (req, reply) =>
    ctx.run(`${req.params.objectType}.batchRead`, req, reply, () => forType(req.params.objectType, (type) => batchRead(ctx.store, type, jsonBody(req)))),
  );

  app.post<ObjectTypeParams>('/crm/v3/objects/:objectType/batch/update', (req, reply) =>
    ctx.run(`${req.params.objectType}.batchUpdate`, req, reply, () => forType(req.params.objectType, (type) => batchUpdate(ctx.store, type, jsonBody(req), ctx.userIdOf(req)))),
  );

  app.post<ObjectTypeParams>('/crm/v3/objects/:objectType/search', (req, reply) =>
    ctx.run(`${req.params.objectType}.search`, req, reply, () => forType(req.params.objectType, (type) => runSearch(ctx.store, type, jsonBody(req), ctx.searchMaxResults)), {
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

/** Records by id, as they are now (reads are not searches: no lag). Ids not found are left out, as HubSpot's 207 does (its errors list unverified here). */
function batchRead(store: HubSpotStore, type: ObjectType, body: unknown): EmulatorReply {
  const parsed = readSchema.safeParse(body);
  if (!parsed.success) return shapeError(parsed.error);
  if (parsed.data.inputs.length > maxBatchInputs) return hubspotErrors.tooManyInputs(parsed.data.inputs.length, maxBatchInputs);
  const names = parsed.data.properties && parsed.data.properties.length > 0 ? parsed.data.properties : defaultSearchProperties[type];
  const results = parsed.data.inputs.flatMap((i) => {
    const r = store.get(type, String(i.id));
    return r ? [publicObject(r, names)] : [];
  });
  const now = new Date(store.clock.now()).toISOString();
  return { status: 200, body: { status: 'COMPLETE', results, startedAt: now, completedAt: now } };
}

/**
 * Changes records' properties, all or nothing: every id must exist and every value validate (the
 * same checks as a create). The change is recorded as the token's user's (hs_updated_by_user_id):
 * what lets the CRM sync tell its own writes from people's.
 */
function batchUpdate(store: HubSpotStore, type: ObjectType, body: unknown, userId: string): EmulatorReply {
  const parsed = updateSchema.safeParse(body);
  if (!parsed.success) return shapeError(parsed.error);
  const { inputs } = parsed.data;
  if (inputs.length > maxBatchInputs) return hubspotErrors.tooManyInputs(inputs.length, maxBatchInputs);
  const checked: Array<{ id: string; properties: Record<string, string> }> = [];
  for (const i of inputs) {
    const id = String(i.id);
    if (!store.get(type, id)) return hubspotErrors.validation(`No ${type} with ID ${id} exist`);
    // A null clears the value: stored as the empty string, which update() removes.
    const set = Object.fromEntries(Object.entries(i.properties).filter(([, v]) => v !== null).map(([k, v]) => [k, String(v)]));
    const c = checkCreate(store, type, { properties: set }, { partial: true });
    if (!c.ok) return c.reply;
    const cleared = Object.fromEntries(Object.entries(i.properties).filter(([, v]) => v === null).map(([k]) => [k, '']));
    checked.push({ id, properties: { ...c.properties, ...cleared } });
  }
  const startedAt = new Date(store.clock.now()).toISOString();
  const results = checked.map((c) => publicObject(store.update(type, c.id, c.properties, { by: userId })!));
  return { status: 200, body: { status: 'COMPLETE', results, startedAt, completedAt: new Date(store.clock.now()).toISOString() } };
}
