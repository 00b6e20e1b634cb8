import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { checkEmail } from '../../leads/email.ts';
import { erasedMarker, type ErasureKey } from '../../common/erasure-key.ts';
import { eraseSubject } from '../../privacy/erase.ts';
import { EXPORT_SECTIONS, exportSubject, sectionCsv } from '../../privacy/export.ts';
import { changeRetention, MAX_RETENTION_DAYS, RETENTION_KINDS, retentionOf, type RetentionKind } from '../../privacy/retention.ts';
import { lastPurgeDay } from '../../privacy/purge-role.ts';
import { updateWorkspace, workspaceRow } from '../../workspace/workspace-row.ts';
import { audit } from '../audit/actor.ts';
import { enrollmentService, realClock, type ApiContext } from '../context.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import type { Db } from '../../store/store.ts';

const days = z.number().int().nullable();
const retentionBody = z
  .object({
    messageBodiesDays: days.describe(RETENTION_KINDS.messageBodiesDays.what),
    messagesDays: days.describe(RETENTION_KINDS.messagesDays.what),
    eventsDays: days.describe(RETENTION_KINDS.eventsDays.what),
    importRejectsDays: days.describe(RETENTION_KINDS.importRejectsDays.what),
    unmatchedCallsDays: days.describe(RETENTION_KINDS.unmatchedCallsDays.what),
    lastPurge: z
      .object({
        day: z.string().describe('The UTC day (YYYY-MM-DD)'),
        finishedAt: z.iso.datetime(),
        counts: z.record(z.string(), z.number()).nullable().describe("Rows this workspace's purge removed or cleared, by kind ({} none); null: that day was purged before counts were kept per workspace"),
      })
      .nullable()
      .describe("The nightly purge's last completed day (null: it has not run yet)"),
  })
  .meta({ id: 'Retention' });

const exportBody = z
  .object({
    email: z.string(),
    workspaceId: z.uuid(),
    exportedAt: z.iso.datetime(),
    erased: z.boolean().describe("The address was erased from this workspace (only its keyed hash remains)"),
    sections: z.record(z.string(), z.array(z.record(z.string(), z.unknown()))).describe(`One array of rows per place data is kept: ${EXPORT_SECTIONS.join(', ')}`),
  })
  .meta({ id: 'SubjectExport' });

async function readRetention(db: Db, workspaceId: string): Promise<z.output<typeof retentionBody>> {
  const w = await workspaceRow(db, workspaceId);
  if (!w) throw cadenzaError('NOT_FOUND', 'no such workspace');
  const last = await lastPurgeDay(db, workspaceId);
  return { ...retentionOf(w.settings as Record<string, unknown>), lastPurge: last ? { ...last, finishedAt: last.finishedAt.toISOString() } : null };
}

/** The audit log names the person by the keyed hash, never the address: the log is kept longer than some of the data. */
function auditTarget(ctx: ApiContext, workspaceId: string, email: string): string {
  const c = checkEmail(email);
  return ctx.erasure && c.ok ? erasedMarker(ctx.erasure, workspaceId, c.norm) : 'a person';
}

function needKey(ctx: ApiContext): ErasureKey {
  if (!ctx.erasure) throw cadenzaError('CONFLICT', 'erasure needs the master key, which this server was started without');
  return ctx.erasure;
}

const emailField = z.string().min(3).max(320);

export const privacyRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/privacy/retention',
    summary: 'How long the workspace keeps personal data, per kind (null: until deleted)',
    tags: ['privacy'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: retentionBody,
    handler: async ({ ctx, ws }) => readRetention(ctx.store.db, ws.workspaceId),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/privacy/retention',
    summary: 'Change the retention (admin); the nightly purge applies it',
    tags: ['privacy'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z
      .object(Object.fromEntries(Object.keys(RETENTION_KINDS).map((k) => [k, z.number().int().min(RETENTION_KINDS[k as RetentionKind].min).max(MAX_RETENTION_DAYS).nullable()])) as Record<RetentionKind, z.ZodNullable<z.ZodNumber>>)
      .partial()
      .strict(),
    example: () => ({ body: { messageBodiesDays: 90, eventsDays: 365 } }),
    response: retentionBody,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const before = await readRetention(ctx.store.db, ws.workspaceId);
      const next = changeRetention(before, body);
      await updateWorkspace(ctx.store.db, ws.workspaceId, {}, { retention: next });
      const after = await readRetention(ctx.store.db, ws.workspaceId);
      const changes = Object.fromEntries(
        (Object.keys(RETENTION_KINDS) as RetentionKind[]).filter((k) => after[k] !== before[k]).map((k) => [k, { from: before[k], to: after[k] }]),
      );
      if (Object.keys(changes).length) await audit(c, { action: 'settings.changed', target: 'retention', detail: changes });
      return after;
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/privacy/export',
    summary: 'Subject access export: everything stored about one address in this workspace (admin)',
    tags: ['privacy'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z.object({ email: emailField }),
    example: () => ({ body: { email: 'lead-a@prospects.test' } }),
    response: exportBody,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const out = await exportSubject(ctx.store.db, ws.workspaceId, body.email, { now: realClock(ctx).now(), ...(ctx.erasure ? { key: ctx.erasure } : {}), ...(ctx.vault ? { sealer: ctx.vault } : {}) });
      const rows = Object.values(out.sections).reduce((n, s) => n + s.length, 0);
      await audit(c, { action: 'privacy.exported', target: auditTarget(ctx, ws.workspaceId, body.email), detail: { rows } });
      return out;
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/privacy/export',
    summary: 'The subject access export (as POST), or one section as CSV with format=csv (admin)',
    tags: ['privacy'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    query: z.object({
      email: emailField,
      format: z.enum(['json', 'csv']).default('json'),
      section: z.enum(EXPORT_SECTIONS as [string, ...string[]]).optional().describe('With format=csv: the section to write'),
    }),
    example: () => ({ query: { email: 'lead-a@prospects.test' } }),
    response: z.union([exportBody, z.string().describe('text/csv')]),
    handler: async (c) => {
      const { ctx, ws, query, reply } = c;
      if (query.format === 'csv' && !query.section) throw cadenzaError('INVALID_INPUT', `format=csv needs a section: one of ${EXPORT_SECTIONS.join(', ')}`, { field: 'section' });
      const out = await exportSubject(ctx.store.db, ws.workspaceId, query.email, { now: realClock(ctx).now(), ...(ctx.erasure ? { key: ctx.erasure } : {}), ...(ctx.vault ? { sealer: ctx.vault } : {}) });
      const rows = Object.values(out.sections).reduce((n, s) => n + s.length, 0);
      await audit(c, { action: 'privacy.exported', target: auditTarget(ctx, ws.workspaceId, query.email), detail: { rows, ...(query.section ? { section: query.section } : {}) } });
      if (query.format === 'json') return out;
      reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${query.section}.csv"`);
      return sectionCsv(out.sections[query.section!] ?? []);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/privacy/erase',
    summary: "Erase a person: stop their enrollments, delete their data, keep a keyed hash so they are never mailed again (admin)",
    tags: ['privacy'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z.object({ email: emailField, confirm: z.literal(true).describe('Erasure cannot be undone') }),
    // Not a seeded lead: the authorization test calls every route with its example, and an erasure
    // of a lead the later tests read would remove it under them.
    example: () => ({ body: { email: 'erase-me@prospects.test', confirm: true as const } }),
    response: z.object({ marker: z.string(), stopped: z.number().int(), deleted: z.record(z.string(), z.number().int()) }).meta({ id: 'Erasure' }),
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const key = needKey(ctx);
      const r = await eraseSubject({ store: ctx.store, service: enrollmentService(ctx), clock: ctx.clock, key }, ws.workspaceId, body.email);
      await audit(c, { action: 'privacy.erased', target: r.marker, detail: { stopped: r.stopped, deleted: r.deleted } });
      return r;
    },
  }),
];
