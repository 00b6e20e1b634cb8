import { createHash } from 'node:crypto';
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { checkStepContent, RSPAMD_DEFAULT_URL, rspamdScorer } from '../../sending/content-check/index.ts';
import { leadValues, senderValues } from '../../sending/send-context.ts';
import { loadDefinition } from '../../sequence/definition-document.ts';
import { findLead, oldestLeads } from '../../leads/sql/leads.ts';
import { poolMailboxes } from '../../mailbox/sql/mailboxes.ts';
import { stepSignature } from '../../mailbox/signature.ts';
import { linkHost, trackingHost } from '../../tracking/domains/hosts.ts';
import { trackingBaseUrl } from '../../tracking/links.ts';
import { workspaceRow } from '../../workspace/workspace-row.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * The content check of a sequence's email step, before launch (src/sending/content-check/): the
 * step rendered and composed for a sample lead as the sender would, Cadenza's own findings, and
 * the local spam filter's score with its rules in plain words when one is installed.
 */

// The check's links are never sent: a fixed key seals them (no secret of the installation used).
const CHECK_TRACKING_KEY = createHash('sha256').update('cadenza content check').digest();

const level = z.enum(['ok', 'warn', 'bad']);
const response = z.object({
  step: z.string(),
  variant: z.string(),
  lead: z.object({ id: z.uuid().nullable(), email: z.string() }).nullable().describe('The sample lead it was rendered for; null: the workspace has no lead, a made-up one was used'),
  rendered: z.boolean().describe('false: the template does not render for this lead (see problem)'),
  problem: z.string().nullable(),
  subject: z.string().nullable(),
  level: level.nullable().describe("The worst of Cadenza's findings"),
  findings: z.array(z.object({ code: z.string(), level, message: z.string() })),
  score: z
    .object({
      status: z.enum(['scored', 'not_installed', 'unavailable', 'not_configured']),
      scorer: z.string().optional(),
      reason: z.string().optional(),
      score: z.number().optional(),
      threshold: z.number().optional().describe('The score from which the filter files it as spam'),
      action: z.string().optional(),
      spam: z.boolean().optional(),
      hits: z.array(z.object({ symbol: z.string(), score: z.number(), explanation: z.string(), options: z.array(z.string()) })).optional(),
    })
    .nullable(),
});

const SAMPLE_LEAD = { email: 'sample.lead@example.com', first_name: 'Sam', last_name: 'Sample', company: 'Example Inc', title: 'Head of Operations', phone: null, country: null, region: null, custom: null };

export const contentCheckRoutes = [
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/sequences/:sequenceId/steps/:stepKey/content-check',
    summary: "Check an email step's content before launch: rendered for a sample lead, Cadenza's checks (links, images, tracking domain, text part, capitals, spam phrases, unsubscribe) and the local spam filter's score with its rule hits (rspamd at CADENZA_RSPAMD_URL)",
    tags: ['sequences'],
    access: { workspace: 'member' },
    params: workspaceParams({ sequenceId: z.uuid(), stepKey: z.string().min(1).max(100) }),
    body: z.object({
      leadId: z.uuid().optional().describe('The lead to render for; default: the oldest lead of the workspace'),
      variant: z.string().max(100).optional().describe('The variant key; default: the first'),
    }),
    example: () => ({ body: {} }),
    response,
    handler: async ({ ctx, ws, params, body }) => {
      const def = await loadDefinition(ctx.store.db, ws.workspaceId, params.sequenceId);
      if (!def) throw cadenzaError('NOT_FOUND', 'no such sequence');
      const step = def.steps.find((s) => s.key === params.stepKey);
      if (!step) throw cadenzaError('NOT_FOUND', 'no such step in this sequence');
      if (step.kind !== 'email') throw cadenzaError('INVALID_INPUT', `step ${step.key} is a ${step.kind} step: only email steps have content to check`);
      const variant = body.variant ? step.variants.find((v) => v.key === body.variant) : step.variants[0];
      if (!variant) throw cadenzaError('NOT_FOUND', 'no such variant of this step');
      const leadRow = body.leadId ? await findLead(ctx.store.db, ws.workspaceId, body.leadId) : (await oldestLeads(ctx.store.db, ws.workspaceId, 1))[0];
      if (body.leadId && !leadRow) throw cadenzaError('NOT_FOUND', 'no such lead');
      const mailbox = (await poolMailboxes(ctx.store.db, ws.workspaceId, def.mailboxes))[0];
      const sender = mailbox ? senderValues(mailbox) : { email: 'rep@example.com', name: 'Sample Rep' };
      const wsRow = await workspaceRow(ctx.store.db, ws.workspaceId);
      const custom = wsRow?.settings && typeof wsRow.settings === 'object' ? (wsRow.settings as Record<string, unknown>).trackingDomain : null;
      // The host the sender would put in links now: the custom host only while it serves a certificate.
      const links = linkHost(await trackingHost(ctx.store.db, ws.workspaceId), typeof custom === 'string' && custom ? custom : null);
      const r = await checkStepContent({
        workspaceId: ws.workspaceId,
        stepId: step.key,
        template: { subject: variant.subject, text: variant.body, html: variant.html },
        signature: stepSignature(step.config, mailbox),
        lead: leadRow ? leadValues(leadRow) : SAMPLE_LEAD,
        sender: { ...sender, email: sender.email ?? 'rep@example.com' },
        tracking: {
          key: CHECK_TRACKING_KEY,
          baseUrl: links.serving ? `https://${links.host}` : trackingBaseUrl(wsRow ?? {}, ctx.publicUrl),
          customDomain: links.host,
          waiting: links.waiting,
          opens: def.tracking.opens,
          clicks: def.tracking.clicks,
        },
        now: ctx.clock.now(),
        scorer: ctx.contentScorer === undefined ? rspamdScorer({ url: RSPAMD_DEFAULT_URL, timeoutMs: 5_000 }) : ctx.contentScorer,
      });
      const lead = leadRow ? { id: body.leadId ?? ('id' in leadRow && typeof leadRow.id === 'string' ? leadRow.id : null), email: leadRow.email } : null;
      if (!r.rendered) return { step: step.key, variant: variant.key, lead, rendered: false, problem: r.reason, subject: null, level: null, findings: [], score: null };
      return { step: step.key, variant: variant.key, lead, rendered: true, problem: null, subject: r.subject, level: r.level, findings: r.findings, score: r.score };
    },
  }),
];
