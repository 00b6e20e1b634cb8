import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { openConnection, saveCredential } from '../../crm/connections.ts';
import { readsChanges } from '../../crm/connector.ts';
import { makeConnector } from '../../crm/connectors.ts';
import { SYNCED_FIELDS } from '../../crm/field-ownership.ts';
import { createListEnrollment, listEnrollments } from '../../crm/list-enroll.ts';
import { changeSettings, listConflicts, updateChangeSettings } from '../../crm/settings.ts';
import { realClock, type ApiContext } from '../context.ts';
import { audit, actorOf } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * CRM sync, changes in (docs/crm.md): a connection's field-ownership map and stop rules, the
 * conflicts logged, the CRM's lists, and enrolling a list in a sequence. Admins only, as every crm
 * route; changes are audited.
 */

const owner = z.enum(['crm', 'cadenza']);
// Keyed by any string for the type generator; the keys are checked against SYNCED_FIELDS by changeOwners (INVALID_INPUT naming them).
const fieldOwners = z.record(z.string(), owner).describe(`Field → owner; the fields: ${SYNCED_FIELDS.join(', ')}`);
const stageIds = z.array(z.string().min(1).max(100)).max(50);
const stopRules = z.object({
  doNotContact: z.boolean().describe("The CRM's do-not-contact flag suppresses the address and stops its enrollments"),
  dealCreated: z.boolean().describe('A deal created (after the connection was made) for the contact stops its enrollments'),
  dealStages: stageIds.describe("A deal moved into one of these stages (the CRM's stage ids) stops its contacts' enrollments"),
  ownerChanged: z.enum(['stop', 'ignore']).describe("The record's owner changed"),
  lifecycleStages: stageIds.describe('The lifecycle stage became one of these (e.g. customer)'),
});
const settings = z
  .object({
    fieldOwners: fieldOwners.describe('Who owns each synced field: the CRM (flows in, never written) or Cadenza (flows out, a CRM edit is a conflict)'),
    fixedFields: z.array(z.string()).describe('Fields whose owner cannot change'),
    stopRules,
  })
  .meta({ id: 'CrmChangeSettings' });
const conflict = z
  .object({
    id: z.number().int(),
    crmId: z.string(),
    email: z.string().nullable(),
    field: z.string(),
    crmValue: z.string().nullable(),
    cadenzaValue: z.string().nullable().describe('What Cadenza last wrote'),
    crmUpdatedAt: z.iso.datetime(),
    crmUpdatedBy: z.string().nullable(),
    at: z.iso.datetime(),
  })
  .meta({ id: 'CrmConflict' });
const listEnrollment = z
  .object({
    id: z.uuid(),
    listId: z.string(),
    listName: z.string(),
    sequenceId: z.uuid(),
    mode: z.enum(['once', 'continuous']),
    state: z.enum(['active', 'done', 'stopped']),
    enrolled: z.number().int(),
    refused: z.number().int().describe('Members not enrolled: already enrolled, suppressed, no or an invalid address…'),
    lastRunAt: z.iso.datetime().nullable(),
    lastError: z.string().nullable(),
  })
  .meta({ id: 'CrmListEnrollment' });
const connectionParams = workspaceParams({ connectionId: z.uuid() });

/** The connection's connector, when its CRM reads lists (opened with the workspace's key). */
async function readerOf(ctx: ApiContext, workspaceId: string, connectionId: string) {
  if (!ctx.vault) throw cadenzaError('CONFIG_INVALID', 'this server has no vault (master key) to open CRM tokens with');
  const c = await openConnection(ctx.store.db, ctx.vault, connectionId).catch(() => null);
  if (!c || c.workspaceId !== workspaceId) throw cadenzaError('NOT_FOUND', 'no such CRM connection in this workspace');
  const vault = ctx.vault;
  // A refresh made here is stored like the writer's (a rotated Pipedrive refresh token must not be lost).
  const connector = makeConnector(c.kind, { baseUrl: c.baseUrl, token: c.token, saveToken: (next) => saveCredential({ db: ctx.store.db, sealer: vault }, connectionId, c.token, next) });
  if (!readsChanges(connector)) throw cadenzaError('INVALID_INPUT', `the ${c.kind} connector of this version reads no lists`);
  return connector;
}

/** A CRM that failed to answer (down, or the token refused) is the caller's to see, not a 500. */
async function fromCrm<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw cadenzaError('CONFLICT', `the CRM did not answer: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export const crmChangeRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/crm/connections/:connectionId/settings',
    summary: "A CRM connection's field-ownership map and stop rules",
    tags: ['crm'],
    access: { workspace: 'admin' },
    params: connectionParams,
    response: settings,
    handler: async ({ ctx, ws, params }) => changeSettings(ctx.store.db, ws.workspaceId, params.connectionId),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/crm/connections/:connectionId/settings',
    summary: "Change who owns which field, or the stop rules, of a CRM connection (admin; the fixed fields' owners cannot change)",
    tags: ['crm'],
    access: { workspace: 'admin' },
    params: connectionParams,
    body: z.object({ fieldOwners: fieldOwners.optional(), stopRules: stopRules.partial().optional() }),
    example: () => ({ body: { stopRules: { dealStages: ['closedwon'] } } }),
    response: settings,
    handler: async (c) => {
      const { ctx, ws, params, body } = c;
      const out = await updateChangeSettings(ctx.store.db, ws.workspaceId, params.connectionId, {
        ...(body.fieldOwners ? { fieldOwners: body.fieldOwners as Record<string, 'crm' | 'cadenza'> } : {}),
        ...(body.stopRules ? { stopRules: body.stopRules } : {}),
      });
      await audit(c, { action: 'crm.settings_changed', target: `crm:${params.connectionId}`, detail: { ...(body.fieldOwners ? { fieldOwners: body.fieldOwners } : {}), ...(body.stopRules ? { stopRules: body.stopRules } : {}) } });
      return out;
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/crm/connections/:connectionId/conflicts',
    summary: 'CRM-side edits of Cadenza-owned fields, newest first: logged, not applied',
    tags: ['crm'],
    access: { workspace: 'admin' },
    params: connectionParams,
    query: z.object({ limit: z.coerce.number().int().min(1).max(500).default(100), before: z.coerce.number().int().min(1).optional() }),
    response: z.object({ conflicts: z.array(conflict) }),
    handler: async ({ ctx, ws, params, query }) => ({ conflicts: await listConflicts(ctx.store.db, ws.workspaceId, params.connectionId, { limit: query.limit, ...(query.before ? { before: query.before } : {}) }) }),
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/crm/connections/:connectionId/lists',
    summary: "The CRM's contact lists a sequence can enroll from (read from the CRM now)",
    tags: ['crm'],
    access: { workspace: 'admin' },
    params: connectionParams,
    response: z.object({ lists: z.array(z.object({ id: z.string(), name: z.string(), size: z.number().int().nullable() })) }),
    handler: async ({ ctx, ws, params }) => {
      const reader = await readerOf(ctx, ws.workspaceId, params.connectionId);
      return { lists: (await fromCrm(reader.lists())).map((l) => ({ id: l.id, name: l.name, size: l.size ?? null })) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/crm/connections/:connectionId/list-enrollments',
    summary: "A CRM connection's list enrollments and what came of them",
    tags: ['crm'],
    access: { workspace: 'admin' },
    params: connectionParams,
    response: z.object({ listEnrollments: z.array(listEnrollment) }),
    handler: async ({ ctx, ws, params }) => {
      await changeSettings(ctx.store.db, ws.workspaceId, params.connectionId);
      return { listEnrollments: await listEnrollments(ctx.store.db, params.connectionId) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/crm/connections/:connectionId/list-enrollments',
    summary: "Enroll a CRM list's members in a sequence (admin): once, or continuously as members join; members without a lead become leads; nobody is enrolled twice",
    tags: ['crm'],
    access: { workspace: 'admin' },
    status: 201,
    params: connectionParams,
    body: z.object({ listId: z.string().min(1).max(200), sequenceId: z.uuid(), mode: z.enum(['once', 'continuous']).default('once') }),
    example: (ids) => ({ body: { listId: '1', sequenceId: ids.sequenceId ?? '00000000-0000-4000-8000-000000000001', mode: 'continuous' as const } }),
    response: listEnrollment,
    handler: async (c) => {
      const { ctx, ws, params, body } = c;
      const reader = await readerOf(ctx, ws.workspaceId, params.connectionId);
      const list = (await fromCrm(reader.lists())).find((l) => l.id === body.listId);
      if (!list) throw cadenzaError('NOT_FOUND', 'the CRM has no such list', { field: 'listId' });
      const actor = await actorOf(c);
      const id = await createListEnrollment(
        { db: ctx.store.db, random: ctx.random, now: realClock(ctx).now() },
        { workspaceId: ws.workspaceId, connectionId: params.connectionId, listId: list.id, listName: list.name, sequenceId: body.sequenceId, mode: body.mode, createdBy: actor.label },
      );
      await audit(c, { action: 'crm.list_enrolled', target: `crm:${params.connectionId}`, detail: { listId: list.id, listName: list.name, sequenceId: body.sequenceId, mode: body.mode } });
      ctx.crm?.nudge();
      return (await listEnrollments(ctx.store.db, params.connectionId, id))[0]!;
    },
  }),
];
