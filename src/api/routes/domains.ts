import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { listDomainHealth, recheckDomain, type DomainListEntry } from '../../sending/dns/domain-monitor.ts';
import { domainAlerts, markAlertsSeen } from '../../sending/dns/sql/domain-health.ts';
import type { ApiContext } from '../context.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * The Domains screen's API (docs/deliverability.md "Domain health"): every domain the workspace
 * sends from, and its tracking host, with each check's finding and the exact record to publish;
 * a re-check now; the alerts (a domain that broke or recovered) and marking them read.
 */

const checkStatus = z.enum(['ok', 'missing', 'differs', 'listed', 'refused', 'unchecked', 'error']);

const domainCheck = z
  .object({
    kind: z.enum(['spf', 'dkim', 'dmarc', 'mx', 'tracking', 'certificate', 'blocklist']).describe("certificate: a custom tracking host's TLS certificate (issued, ending soon, renewal failing)"),
    name: z.string().describe('The DNS name asked'),
    status: checkStatus.describe('refused: the blocklist refused the query (not a listing); error: the lookup failed'),
    published: z.array(z.string()).describe('What the name publishes now (TXT values, MX as "priority host", CNAME targets, blocklist codes)'),
    differences: z.array(z.string()).describe('What is wrong, in words'),
    publish: z
      .object({ type: z.enum(['TXT', 'CNAME', 'MX']), name: z.string(), value: z.string(), note: z.string().optional().describe('Where to get a value Cadenza cannot know (a provider\'s DKIM key)') })
      .optional()
      .describe('The exact record to publish to fix it'),
    zone: z.string().optional().describe('Blocklist checks: the list'),
    target: z.string().optional().describe('Blocklist checks: the domain or mail host address looked up'),
  })
  .meta({ id: 'DomainCheck' });

const domainBody = z
  .object({
    domain: z.string(),
    purpose: z.enum(['sending', 'tracking']).describe("sending: a mailbox's domain; tracking: the workspace's tracking host"),
    verdict: z.enum(['ok', 'broken', 'unknown']).nullable().describe('The last check: broken (a record missing or wrong, or listed), unknown (lookups failed), null (not checked yet)'),
    status: z.enum(['ok', 'broken']).nullable().describe('The last verdict that was not unknown: what alerts compare'),
    checks: z.array(domainCheck),
    checkedAt: z.string().nullable(),
    changedAt: z.string().nullable().describe('When the status last changed'),
  })
  .meta({ id: 'Domain' });

const alertBody = z
  .object({
    id: z.number().int(),
    domain: z.string(),
    purpose: z.enum(['sending', 'tracking']),
    from: z.enum(['ok', 'broken']),
    to: z.enum(['ok', 'broken']),
    failing: z.array(z.object({ kind: z.string(), name: z.string(), status: z.string(), differences: z.array(z.string()) })),
    at: z.string(),
    seen: z.boolean(),
  })
  .meta({ id: 'DomainAlert' });

const view = (d: DomainListEntry): z.output<typeof domainBody> => ({
  domain: d.domain,
  purpose: d.purpose,
  verdict: d.verdict,
  status: d.status,
  checks: d.checks,
  checkedAt: d.checkedAt?.toISOString() ?? null,
  changedAt: d.changedAt?.toISOString() ?? null,
});

/** The host tracking CNAMEs must point to: the checks' setting, else the public URL's host. */
const publicHost = (ctx: ApiContext) => ctx.domains?.publicHost ?? new URL(ctx.publicUrl).hostname;

export const domainRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/domains',
    summary: "The workspace's sending domains and tracking host, each with its SPF, DKIM, DMARC, MX, tracking CNAME and blocklist checks and the exact records to publish",
    tags: ['domains'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({
      domains: z.array(domainBody),
      unseenAlerts: z.number().int().describe('Alerts not yet marked read'),
      checksEnabled: z.boolean().describe('false: this server makes no DNS checks (CADENZA_DOMAIN_CHECKS=off); results shown are stored ones'),
    }),
    handler: async ({ ctx, ws }) => {
      const [domains, alerts] = await Promise.all([listDomainHealth(ctx.store, ws.workspaceId, publicHost(ctx)), domainAlerts(ctx.store.db, ws.workspaceId, 100)]);
      return { domains: domains.map(view), unseenAlerts: alerts.filter((a) => a.seenAt === null).length, checksEnabled: !!ctx.domains };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/domains/recheck',
    summary: 'Check one of the workspace\'s domains now and store the result (rate-limited: 10 a minute per client)',
    tags: ['domains'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ domain: z.string().min(1).max(253).describe("A mailbox's domain or the tracking host") }),
    example: () => ({ body: { domain: 'example.test' } }),
    // Each check is a few dozen DNS queries (more with blocklists, which limit queries per resolver).
    rateLimit: () => ({ max: 10, windowMs: 60_000 }),
    response: domainBody,
    handler: async ({ ctx, ws, body }) => {
      if (!ctx.domains) throw cadenzaError('CONFLICT', 'domain checks are off on this server (CADENZA_DOMAIN_CHECKS=off); the results shown are the last stored ones');
      // A change found here is an alert like the daily pass's (the webhook is queued with it).
      const { health } = await recheckDomain({ store: ctx.store, clock: ctx.clock, settings: ctx.domains }, ws.workspaceId, body.domain);
      const entry = (await listDomainHealth(ctx.store, ws.workspaceId, publicHost(ctx))).find((d) => d.domain === health.domain && d.purpose === health.purpose);
      if (!entry) throw cadenzaError('NOT_FOUND', `${health.domain} is no longer a domain of this workspace`);
      return view(entry);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/domains/alerts',
    summary: 'Domains that broke or recovered, newest first (the last 100)',
    tags: ['domains'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ alerts: z.array(alertBody) }),
    handler: async ({ ctx, ws }) => ({
      alerts: (await domainAlerts(ctx.store.db, ws.workspaceId, 100)).map((a) => ({ id: a.id, domain: a.domain, purpose: a.purpose, from: a.from, to: a.to, failing: a.failing, at: a.at.toISOString(), seen: a.seenAt !== null })),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/domains/alerts/seen',
    summary: 'Mark the alerts up to an id read',
    tags: ['domains'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ upToId: z.number().int().min(1) }),
    example: () => ({ body: { upToId: 1 } }),
    response: z.object({ marked: z.number().int() }),
    handler: async ({ ctx, ws, body }) => ({ marked: await markAlertsSeen(ctx.store.db, ws.workspaceId, body.upToId, new Date(ctx.clock.now())) }),
  }),
];
