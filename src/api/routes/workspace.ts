import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { isValidZone } from '../../calendar/index.ts';
import { checkTrackingDomain } from '../../tracking/links.ts';
import { createWorkspace } from '../auth/accounts.ts';
import { updateWorkspace, workspaceRow } from '../../workspace/workspace-row.ts';
import { audit } from '../audit/actor.ts';
import { auditRetentionDays, DEFAULT_AUDIT_RETENTION_DAYS, MAX_AUDIT_RETENTION_DAYS, MIN_AUDIT_RETENTION_DAYS } from '../audit/retention.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { DEFAULT_RECORDING_RETENTION_DAYS, MAX_RECORDING_RETENTION_DAYS, MIN_RECORDING_RETENTION_DAYS, recordingSettings } from '../../dialer/recording/settings.ts';

const settingsBody = z
  .object({
    id: z.uuid(),
    name: z.string(),
    timeZone: z.string(),
    holidaysCountry: z.string().nullable().describe("ISO 3166-1 alpha-2; business days of a lead without a country of its own skip its public holidays"),
    trackingDomain: z.string().nullable().describe('A CNAME to this server used in tracking links, or null for the public URL'),
    auditRetentionDays: z.number().int().describe(`Days the audit log keeps an event (default ${DEFAULT_AUDIT_RETENTION_DAYS})`),
    dkimSelector: z.string().nullable().describe("The DKIM selector SMTP mailboxes' mail is signed with (their host's), for the Domains checks; null: not checked"),
    callRecording: z.boolean().describe('Calls placed from the softphone are recorded, with a consent announcement to both sides (default off)'),
    callRecordingRetentionDays: z.number().int().describe(`Days a call recording is kept (default ${DEFAULT_RECORDING_RETENTION_DAYS})`),
  })
  .meta({ id: 'WorkspaceSettings' });

/** A DKIM selector: one or more DNS labels (RFC 6376 §3.1), lower-cased. */
const dkimSelector = z
  .string()
  .max(63)
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/, 'a DKIM selector such as s1 or google (letters, digits, hyphens, dots)')
  .transform((v) => v.toLowerCase());

function recordingView(settings: Record<string, unknown>): { callRecording: boolean; callRecordingRetentionDays: number } {
  const r = recordingSettings(settings);
  return { callRecording: r.enabled, callRecordingRetentionDays: r.retentionDays };
}

async function readSettings(db: import('../../store/store.ts').Db, workspaceId: string): Promise<z.output<typeof settingsBody>> {
  const w = await workspaceRow(db, workspaceId);
  if (!w) throw cadenzaError('NOT_FOUND', 'no such workspace');
  const s = w.settings as { trackingDomain?: unknown; dkimSelector?: unknown };
  return {
    id: w.id,
    name: w.name,
    timeZone: w.time_zone,
    holidaysCountry: w.country,
    trackingDomain: typeof s.trackingDomain === 'string' ? s.trackingDomain : null,
    auditRetentionDays: auditRetentionDays(w.settings as Record<string, unknown>),
    dkimSelector: typeof s.dkimSelector === 'string' ? s.dkimSelector : null,
    ...recordingView(w.settings as Record<string, unknown>),
  };
}

export const workspaceRoutes = [
  defineRoute({
    method: 'POST',
    url: '/api/workspaces',
    summary: 'Create a workspace; the signed-in person becomes its owner',
    tags: ['workspace'],
    access: 'account',
    status: 201,
    body: z.object({
      name: z.string().trim().min(1).max(200),
      timeZone: z.string().refine(isValidZone, 'an IANA time zone such as Europe/Paris').optional(),
    }),
    example: () => ({ body: { name: 'Acme EMEA', timeZone: 'Europe/Paris' } }),
    response: z.object({ id: z.uuid(), name: z.string(), timeZone: z.string(), role: z.literal('owner') }).meta({ id: 'WorkspaceCreated' }),
    handler: async ({ ctx, principal, body }) => {
      if (principal?.kind !== 'session') throw cadenzaError('UNAUTHENTICATED', 'not signed in');
      const r = await createWorkspace(ctx.store, ctx, { accountId: principal.accountId, name: body.name, timeZone: body.timeZone });
      return { id: r.workspaceId, name: body.name, timeZone: body.timeZone ?? 'UTC', role: 'owner' as const };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/settings',
    summary: "The workspace's name, time zone, holidays country and tracking domain",
    tags: ['workspace'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: settingsBody,
    handler: async ({ ctx, ws }) => readSettings(ctx.store.db, ws.workspaceId),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/settings',
    summary: 'Change workspace settings (admin)',
    tags: ['workspace'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z
      .object({
        name: z.string().min(1).max(200),
        timeZone: z.string().refine(isValidZone, 'an IANA time zone such as Europe/Paris'),
        holidaysCountry: z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 code such as FR').nullable(),
        trackingDomain: z.string().max(253).nullable(),
        auditRetentionDays: z.number().int().min(MIN_AUDIT_RETENTION_DAYS).max(MAX_AUDIT_RETENTION_DAYS),
        dkimSelector: dkimSelector.nullable(),
        callRecording: z.boolean(),
        callRecordingRetentionDays: z.number().int().min(MIN_RECORDING_RETENTION_DAYS).max(MAX_RECORDING_RETENTION_DAYS),
      })
      .partial(),
    example: () => ({ body: { timeZone: 'Europe/Paris' } }),
    response: settingsBody,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const set: { name?: string; time_zone?: string; country?: string | null } = {};
      if (body.name !== undefined) set.name = body.name;
      if (body.timeZone !== undefined) set.time_zone = body.timeZone;
      if (body.holidaysCountry !== undefined) set.country = body.holidaysCountry;
      let settingsPatch: Record<string, unknown> | undefined;
      if (body.trackingDomain !== undefined) {
        if (body.trackingDomain === null) settingsPatch = { trackingDomain: null };
        else {
          const d = checkTrackingDomain(body.trackingDomain);
          if (!d.ok) throw cadenzaError('INVALID_INPUT', `trackingDomain: ${d.message}`, { field: 'trackingDomain' });
          settingsPatch = { trackingDomain: d.domain };
        }
      }
      if (body.auditRetentionDays !== undefined) settingsPatch = { ...settingsPatch, auditRetentionDays: body.auditRetentionDays };
      // null removes it (jsonb_strip_nulls): SMTP domains' DKIM goes back to 'unchecked'.
      if (body.dkimSelector !== undefined) settingsPatch = { ...settingsPatch, dkimSelector: body.dkimSelector };
      // Takes effect with the next SIP credential each softphone fetches (at most CADENZA_SIP_CREDENTIAL_TTL_S).
      if (body.callRecording !== undefined) settingsPatch = { ...settingsPatch, callRecording: body.callRecording };
      if (body.callRecordingRetentionDays !== undefined) settingsPatch = { ...settingsPatch, callRecordingRetentionDays: body.callRecordingRetentionDays };
      const before = await readSettings(ctx.store.db, ws.workspaceId);
      // A null trackingDomain is removed, so senders fall back to the public URL.
      await updateWorkspace(ctx.store.db, ws.workspaceId, set, settingsPatch);
      const after = await readSettings(ctx.store.db, ws.workspaceId);
      // What changed, from and to: settings hold no secrets.
      const changes = Object.fromEntries(
        (Object.keys(after) as (keyof typeof after)[]).filter((k) => after[k] !== before[k]).map((k) => [k, { from: before[k], to: after[k] }]),
      );
      if (Object.keys(changes).length) await audit(c, { action: 'settings.changed', target: 'workspace', detail: changes });
      return after;
    },
  }),
];
