import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { MAX_LOGO_BYTES, normalColour, sniffLogo } from '../../agency/branding.ts';
import { agencyOf, brandingByAppHost, brandingOf, logoOf, setLogo, upsertBranding, type BrandingRow } from '../../agency/sql/agency.ts';
import { hostView, trackingHost } from '../../tracking/domains/hosts.ts';
import { requestHost } from '../../tracking/domains/challenge-route.ts';
import { audit } from '../audit/actor.ts';
import type { ApiContext } from '../context.ts';
import { defineRoute, workspaceParams, type RouteContext } from '../http/route.ts';
import { deleteCustomHost, hostBody, putCustomHost } from './tracking-domain.ts';

/**
 * White-label branding of an agency's client workspace (docs/web.md "Agency"): display name,
 * colours, logo, and the app served on the client's own domain. The domain is a custom host of
 * purpose 'app' in the tracking domains' machinery (src/tracking/domains/): the same CNAME check,
 * ACME job, sealed certificate and HTTPS listener; on it the web app reads GET /api/branding
 * (public, by the request's Host) before sign-in.
 */
const colour = z
  .string()
  .max(7)
  .transform((v, c) => normalColour(v) ?? (c.addIssue({ code: 'custom', message: 'a colour such as #3d5afe' }), z.NEVER));

const brandingView = z
  .object({
    displayName: z.string(),
    primaryColor: z.string(),
    accentColor: z.string(),
    logoUrl: z.string().nullable().describe('Where the logo is served (versioned); null without a logo'),
  })
  .meta({ id: 'Branding' });

function view(b: BrandingRow, logoBase: string): z.output<typeof brandingView> {
  return { displayName: b.display_name, primaryColor: b.primary_color, accentColor: b.accent_color, logoUrl: b.logo_type ? `${logoBase}?v=${b.logo_version}` : null };
}

const url = '/api/workspaces/:workspaceId/branding';

async function clientOnly(ctx: ApiContext, workspaceId: string): Promise<void> {
  if ((await agencyOf(ctx.store.db, workspaceId)) == null) throw cadenzaError('CONFLICT', 'branding is set on a client workspace of an agency; this workspace is not one');
}

export const brandingRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/branding',
    summary: "The branding of the client whose app host is this request's Host, or null: what the web app shows before sign-in",
    tags: ['agency'],
    access: 'public',
    response: z.object({ branding: brandingView.nullable() }),
    handler: async ({ ctx, req, reply }) => {
      const host = requestHost(req.headers.host);
      const b = host ? await brandingByAppHost(ctx.store.db, host) : undefined;
      reply.header('cache-control', 'no-cache').header('vary', 'Host');
      return { branding: b ? view(b, '/api/branding/logo') : null };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/branding/logo',
    summary: "The logo of the client whose app host is this request's Host; 404 when none",
    tags: ['agency'],
    access: 'public',
    response: z.string().describe('image/png, image/jpeg or image/webp'),
    handler: async ({ ctx, req, reply }) => {
      const host = requestHost(req.headers.host);
      const b = host ? await brandingByAppHost(ctx.store.db, host) : undefined;
      const logo = b ? await logoOf(ctx.store.db, b.workspace_id) : undefined;
      if (!logo) throw cadenzaError('NOT_FOUND', 'no logo here');
      // nosniff: the bytes were checked to be this type on upload; the browser must not guess another.
      reply.type(logo.type).header('x-content-type-options', 'nosniff').header('cache-control', 'public, max-age=300').header('vary', 'Host');
      return logo.bytes as unknown as string;
    },
  }),
  defineRoute({
    method: 'GET',
    url,
    summary: "The workspace's branding and its app host, or null branding for a workspace that is not an agency's client",
    tags: ['agency'],
    access: { workspace: 'viewer' },
    params: workspaceParams({}),
    response: z.object({
      isClient: z.boolean(),
      branding: brandingView.nullable(),
      domain: hostBody.nullable().describe("The client's own domain serving the app (a CNAME to this server), with its certificate's state"),
      domainsEnabled: z.boolean().describe('Custom hosts are on on this server (CADENZA_TRACKING_HTTPS_PORT)'),
    }),
    handler: async ({ ctx, ws }) => {
      const [agency, b, row] = await Promise.all([agencyOf(ctx.store.db, ws.workspaceId), brandingOf(ctx.store.db, ws.workspaceId), trackingHost(ctx.store.db, ws.workspaceId, 'app')]);
      const publicHost = ctx.trackingDomains?.publicHost ?? null;
      return {
        isClient: agency != null,
        branding: b ? view(b, `/api/workspaces/${ws.workspaceId}/branding/logo`) : null,
        domain: row ? hostView(row, publicHost ?? '') : null,
        domainsEnabled: publicHost !== null,
      };
    },
  }),
  defineRoute({
    method: 'PUT',
    url,
    summary: "Set the client workspace's display name and colours (admin)",
    tags: ['agency'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z.object({ displayName: z.string().trim().min(1).max(100), primaryColor: colour, accentColor: colour }),
    example: () => ({ body: { displayName: 'Northwind Sales', primaryColor: '#1a237e', accentColor: '#ff6f00' } }),
    response: brandingView,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      await clientOnly(ctx, ws.workspaceId);
      await upsertBranding(ctx.store.db, ws.workspaceId, body, new Date(ctx.clock.now()));
      await audit(c, { action: 'settings.changed', target: 'workspace', detail: { branding: body } });
      return view((await brandingOf(ctx.store.db, ws.workspaceId))!, `/api/workspaces/${ws.workspaceId}/branding/logo`);
    },
  }),
  defineRoute({
    method: 'GET',
    url: `${url}/logo`,
    summary: "The client workspace's logo; 404 when it has none",
    tags: ['agency'],
    access: { workspace: 'viewer' },
    params: workspaceParams({}),
    response: z.string().describe('image/png, image/jpeg or image/webp'),
    handler: async ({ ctx, ws, reply }) => {
      const logo = await logoOf(ctx.store.db, ws.workspaceId);
      if (!logo) throw cadenzaError('NOT_FOUND', 'this workspace has no logo');
      reply.type(logo.type).header('x-content-type-options', 'nosniff').header('cache-control', 'private, max-age=300');
      return logo.bytes as unknown as string;
    },
  }),
  defineRoute({
    method: 'POST',
    url: `${url}/logo`,
    summary: `Upload the client workspace's logo (admin): a PNG, JPEG or WebP image of at most ${MAX_LOGO_BYTES / 1024} KB, its type read from its bytes`,
    tags: ['agency'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    rawBody: { contentType: 'application/octet-stream', maxBytes: MAX_LOGO_BYTES + 1, description: 'The image file' },
    response: brandingView,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      await clientOnly(ctx, ws.workspaceId);
      const parts: Buffer[] = [];
      try {
        for await (const chunk of body as AsyncIterable<Buffer>) parts.push(chunk);
      } catch {
        throw cadenzaError('INVALID_INPUT', `the logo is larger than ${MAX_LOGO_BYTES / 1024} KB`, { field: 'logo' });
      }
      const bytes = Buffer.concat(parts);
      const s = sniffLogo(bytes);
      if (!s.ok) throw cadenzaError('INVALID_INPUT', s.message, { field: 'logo' });
      await setLogo(ctx.store.db, ws.workspaceId, { bytes, type: s.type }, new Date(ctx.clock.now()));
      await audit(c, { action: 'settings.changed', target: 'workspace', detail: { brandingLogo: { type: s.type, bytes: bytes.length } } });
      return view((await brandingOf(ctx.store.db, ws.workspaceId))!, `/api/workspaces/${ws.workspaceId}/branding/logo`);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: `${url}/logo`,
    summary: "Remove the client workspace's logo (admin): the name and colours stay; the sign-in page and portal show the name alone",
    tags: ['agency'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: brandingView,
    handler: async (c) => {
      const { ctx, ws } = c;
      await clientOnly(ctx, ws.workspaceId);
      const before = await brandingOf(ctx.store.db, ws.workspaceId);
      if (!before) throw cadenzaError('NOT_FOUND', 'this workspace has no branding yet');
      // Only a logo there is removed: the version grows, so a cached copy under the old URL is not reused.
      if (before.logo_type) {
        await setLogo(ctx.store.db, ws.workspaceId, null, new Date(ctx.clock.now()));
        await audit(c, { action: 'settings.changed', target: 'workspace', detail: { brandingLogo: 'removed' } });
      }
      return view((await brandingOf(ctx.store.db, ws.workspaceId))!, `/api/workspaces/${ws.workspaceId}/branding/logo`);
    },
  }),
  defineRoute({
    method: 'PUT',
    url: `${url}/domain`,
    summary: "Serve the app on the client's own domain (admin): a CNAME to this server, then a certificate is obtained as for tracking hosts",
    tags: ['agency'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z.object({ host: z.string().max(300) }),
    example: () => ({ body: { host: 'app.northwind.example.com' } }),
    response: hostBody,
    handler: async (c) => {
      await clientOnly(c.ctx, c.ws.workspaceId);
      return putCustomHost(c as RouteContext<unknown, unknown, unknown>, c.body.host, 'app');
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: `${url}/domain`,
    summary: "Stop serving the app on the client's domain (admin); its certificate is forgotten",
    tags: ['agency'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: z.object({ removed: z.boolean() }),
    handler: (c) => deleteCustomHost(c as RouteContext<unknown, unknown, unknown>, 'app'),
  }),
];
