import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { DOMAIN_STATES } from '../../tracking/domains/policy.ts';
import { hostView, removeTrackingHost, setTrackingHost, trackingHost, verifyTrackingHost } from '../../tracking/domains/hosts.ts';
import { audit } from '../audit/actor.ts';
import type { ApiContext } from '../context.ts';
import { defineRoute, workspaceParams, type RouteContext } from '../http/route.ts';
import type { HostPurpose } from '../../tracking/domains/sql/tracking-domain.ts';

/**
 * A workspace's custom tracking host (src/tracking/domains/; docs/deliverability.md "Custom
 * tracking domains"): set, see, verify now, remove. Admins change it; members see it.
 */
export const hostBody = z
  .object({
    host: z.string(),
    state: z.enum(DOMAIN_STATES).describe('pending_dns → issuing → active → renewing; failed with a reason'),
    reason: z.string().nullable().describe('Why the host is not (or soon not) serving, in plain words'),
    cnameTarget: z.string().describe('The name the host must be a CNAME to'),
    certificate: z
      .object({ notBefore: z.string(), notAfter: z.string(), issuedAt: z.string().nullable().describe('When it was stored: its issuance or last renewal') })
      .nullable()
      .describe('The certificate served (or last served); null before the first issuance'),
    nextCheckAt: z.string().describe('When the host is checked next (verify, issue, renew or retry)'),
  })
  .meta({ id: 'TrackingHost' });

const url = '/api/workspaces/:workspaceId/tracking-domain';

export function enabled(ctx: ApiContext): NonNullable<ApiContext['trackingDomains']> {
  if (!ctx.trackingDomains) throw cadenzaError('CONFLICT', 'custom tracking domains are off on this server (CADENZA_TRACKING_HTTPS_PORT is not set)');
  return ctx.trackingDomains;
}

const auditKey: Record<HostPurpose, string> = { tracking: 'trackingHost', app: 'appHost' };

/** Sets the workspace's custom host of this purpose (the tracking host, or an agency client's app host, branding.ts). */
export async function putCustomHost(c: RouteContext<unknown, unknown, unknown>, host: string, purpose: HostPurpose): Promise<z.output<typeof hostBody>> {
  const { ctx, ws } = c;
  const on = enabled(ctx);
  const before = await trackingHost(ctx.store.db, ws.workspaceId, purpose);
  const r = await setTrackingHost(ctx.store.db, ws.workspaceId, host, on.publicHost, ctx.clock.now(), purpose);
  if (!r.ok) throw cadenzaError(r.why === 'taken' ? 'CONFLICT' : 'INVALID_INPUT', r.message, { field: 'host' });
  if (r.changed) {
    await audit(c, { action: 'settings.changed', target: 'workspace', detail: { [auditKey[purpose]]: { from: before?.host ?? null, to: r.row.host } } });
    on.nudge();
  }
  return hostView(r.row, on.publicHost);
}

export async function deleteCustomHost(c: RouteContext<unknown, unknown, unknown>, purpose: HostPurpose): Promise<{ removed: boolean }> {
  const before = await trackingHost(c.ctx.store.db, c.ws.workspaceId, purpose);
  const removed = await removeTrackingHost(c.ctx.store.db, c.ws.workspaceId, purpose);
  if (removed) await audit(c, { action: 'settings.changed', target: 'workspace', detail: { [auditKey[purpose]]: { from: before?.host ?? null, to: null } } });
  return { removed };
}

export const trackingDomainRoutes = [
  defineRoute({
    method: 'GET',
    url,
    summary: "The workspace's custom tracking host and its certificate's state, or null",
    tags: ['tracking'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({
      domain: hostBody.nullable(),
      enabled: z.boolean().describe('Custom tracking hosts are on on this server (CADENZA_TRACKING_HTTPS_PORT); off, a host cannot be set'),
      cnameTarget: z.string().nullable().describe('The name a host must be a CNAME to; null when off'),
    }),
    handler: async ({ ctx, ws }) => {
      const row = await trackingHost(ctx.store.db, ws.workspaceId);
      const publicHost = ctx.trackingDomains?.publicHost ?? null;
      return { domain: row ? hostView(row, publicHost ?? '') : null, enabled: publicHost !== null, cnameTarget: publicHost };
    },
  }),
  defineRoute({
    method: 'PUT',
    url,
    summary: 'Set the custom tracking host (admin): a CNAME to this server, then a certificate is obtained',
    tags: ['tracking'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z.object({ host: z.string().max(300) }),
    example: () => ({ body: { host: 'track.example.com' } }),
    response: hostBody,
    handler: (c) => putCustomHost(c, c.body.host, 'tracking'),
  }),
  defineRoute({
    method: 'POST',
    url: `${url}/verify`,
    summary: 'Check the CNAME and obtain the certificate now (admin), instead of at the next periodic check',
    tags: ['tracking'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    status: 202,
    response: hostBody,
    handler: async ({ ctx, ws }) => {
      const on = enabled(ctx);
      const row = await verifyTrackingHost(ctx.store.db, ws.workspaceId, ctx.clock.now());
      if (!row) throw cadenzaError('NOT_FOUND', 'this workspace has no custom tracking host');
      on.nudge();
      return hostView(row, on.publicHost);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url,
    summary: 'Remove the custom tracking host (admin): links use the public URL again, its certificate is forgotten',
    tags: ['tracking'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: z.object({ removed: z.boolean() }),
    handler: (c) => deleteCustomHost(c, 'tracking'),
  }),
];
