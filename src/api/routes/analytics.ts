import { sql } from 'kysely';
import { z } from 'zod';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { lastSendError, mailboxHealth } from '../../mailbox/health/view.ts';
import { analyticsWindow, comparedVariants, emailSteps, perDay, perStep, replyToStopMs } from './analytics-figures.ts';


/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const analyticsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics',
    summary: 'Sends, replies, bounces and unsubscribes per UTC day, the per-step funnel and variants over the same window, and reply-to-stop latency percentiles (real ms)',
    tags: ['analytics'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({ days: z.coerce.number().int().min(1).max(366).default(30) }),
    response: z
      .object({
        asOf: z.string().describe('The window ends with this instant\'s UTC day: the later of now and the latest journal entry (a demo runs its clock ahead of the real date)'),
        totals: z.object({ sends: z.number().int(), replies: z.number().int(), bounces: z.number().int(), unsubscribes: z.number().int() }).describe('The sums of days[]: the headline figures'),
        days: z.array(z.object({ day: z.string(), sends: z.number().int(), replies: z.number().int(), bounces: z.number().int(), unsubscribes: z.number().int() })),
        funnel: z
          .array(z.object({ sequenceName: z.string(), stepKey: z.string(), removed: z.boolean(), sent: z.number().int(), replied: z.number().int() }))
          .describe('Per email step, over the same window: sends, and replies credited to the last email sent before them'),
        unattributedReplies: z.number().int().describe('Replies in the window with no email sent before them (not in the funnel)'),
        variants: z
          .array(z.object({ sequenceName: z.string(), stepKey: z.string(), variantKey: z.string(), sent: z.number().int(), replied: z.number().int() }))
          .describe('Email steps with more than one variant: sends of each in the window, and the replies credited to it'),
        replyToStop: z.object({ count: z.number().int(), p50Ms: z.number().nullable(), p90Ms: z.number().nullable(), p99Ms: z.number().nullable() }).describe('Real milliseconds, even for work done on a demo\'s accelerated clock'),
      })
      .meta({ id: 'Analytics' }),
    handler: async ({ ctx, ws, query }) => {
      const db = ctx.store.db;
      const w = await analyticsWindow(db, ws.workspaceId, ctx.clock.now(), query.days);
      const days = await perDay(db, ws.workspaceId, w);
      const totals = { sends: 0, replies: 0, bounces: 0, unsubscribes: 0 };
      for (const d of days) for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += d[k];

      const rows = await perStep(db, ws.workspaceId, w);
      const funnel = new Map((await emailSteps(db, ws.workspaceId)).map((st) => [st.id, { sequenceName: st.name, stepKey: st.key, removed: false, sent: 0, replied: 0 }]));
      const variants = new Map((await comparedVariants(db, ws.workspaceId)).map((v) => [`${v.step_id}:${v.variant_key}`, { sequenceName: v.sequence_name, stepKey: v.step_key, variantKey: v.variant_key, sent: 0, replied: 0 }]));
      for (const r of rows) {
        let f = funnel.get(r.step_id);
        if (!f) funnel.set(r.step_id, (f = { sequenceName: r.sequence_name, stepKey: r.step_key, removed: true, sent: 0, replied: 0 }));
        f.sent += Number(r.sent);
        f.replied += Number(r.replied);
        const v = variants.get(`${r.step_id}:${r.variant_key}`);
        if (v) {
          v.sent += Number(r.sent);
          v.replied += Number(r.replied);
        }
      }
      const credited = [...funnel.values()].reduce((n, f) => n + f.replied, 0);
      const ms = await replyToStopMs(db, ws.workspaceId, w);
      return {
        asOf: new Date(w.asOf).toISOString(),
        totals,
        days,
        funnel: [...funnel.values()],
        unattributedReplies: Math.max(0, totals.replies - credited),
        variants: [...variants.values()],
        replyToStop: { count: ms.length, p50Ms: percentile(ms, 50), p90Ms: percentile(ms, 90), p99Ms: percentile(ms, 99) },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics/variants',
    summary: "Reply rate per variant: sends of each variant, and replies that came after it was the enrollment's last email",
    tags: ['analytics'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({ sequenceId: z.uuid().optional() }),
    response: z.object({
      variants: z.array(
        z.object({ sequenceId: z.uuid(), sequenceName: z.string(), stepKey: z.string(), variantKey: z.string(), sent: z.number().int(), replied: z.number().int(), replyRate: z.number().nullable() }),
      ),
    }),
    handler: async ({ ctx, ws, query }) => {
      // A reply is credited to the variant of the last email the prospect got before it.
      const rows = await sql<{ sequence_id: string; sequence_name: string; step_key: string; variant_key: string; sent: number; replied: number }>`
        select s.id as sequence_id, s.name as sequence_name, st.key as step_key, v.key as variant_key,
               count(*)::int as sent,
               (count(*) filter (where e.state = 'replied' and e.last_step_id = r.step_id))::int as replied
        from send_request r
        join variant v on v.id = r.variant_id
        join step st on st.id = r.step_id
        join sequence s on s.id = st.sequence_id
        join enrollment e on e.id = r.enrollment_id
        where r.workspace_id = ${ws.workspaceId} and r.state = 'sent'
          ${query.sequenceId ? sql`and s.id = ${query.sequenceId}` : sql``}
        group by s.id, s.name, st.key, st.position, v.key
        order by s.name, st.position, v.key`.execute(ctx.store.db);
      return {
        variants: rows.rows.map((r) => ({
          sequenceId: r.sequence_id, sequenceName: r.sequence_name, stepKey: r.step_key, variantKey: r.variant_key,
          sent: Number(r.sent), replied: Number(r.replied), replyRate: Number(r.sent) > 0 ? Number(r.replied) / Number(r.sent) : null,
        })),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics/mailboxes',
    summary: 'Per-mailbox health over a window: sends, hard and soft bounces, bounce rate, replies, and the current health with its reason',
    tags: ['analytics'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({ days: z.coerce.number().int().min(1).max(90).default(7) }),
    response: z.object({
      mailboxes: z.array(
        z.object({
          id: z.uuid(), email: z.string(), health: z.string(), healthReason: z.string().nullable(),
          sent: z.number().int(), hardBounces: z.number().int(), softBounces: z.number().int(), bounceRate: z.number().nullable(), replies: z.number().int(),
        }),
      ),
    }),
    handler: async ({ ctx, ws, query }) => {
      // The same window and sources as GET …/analytics (analytics-figures.ts): the journal's sends, by the mailbox of their request.
      const w = await analyticsWindow(ctx.store.db, ws.workspaceId, ctx.clock.now(), query.days);
      const [since, until] = [w.since, w.until];
      const rows = await sql<{ id: string; email: string; health: string; health_reason: string | null; settings: unknown; sync_error: string | null; sent: number; hard: number; soft: number; replies: number }>`
        select m.id, case when m.removed_at is null then m.email else m.email || ' (removed mailbox)' end as email, m.health, m.health_reason, m.settings,
          (select y.last_error from mailbox_sync y where y.mailbox_id = m.id) as sync_error,
          (select count(*) from event e join send_request r on r.enrollment_id = e.enrollment_id and r.step_id = (e.payload->'event'->>'stepId')::uuid
            where e.workspace_id = m.workspace_id and e.type = 'step_sent' and r.mailbox_id = m.id and e.at >= ${since} and e.at < ${until})::int as sent,
          (select count(*) from send_request r where r.mailbox_id = m.id and r.bounced_at >= ${since} and r.bounced_at < ${until} and r.bounce_kind = 'hard')::int as hard,
          (select count(*) from send_request r where r.mailbox_id = m.id and r.bounced_at >= ${since} and r.bounced_at < ${until} and r.bounce_kind = 'soft')::int as soft,
          (select count(*) from message x where x.mailbox_id = m.id and x.direction = 'inbound' and x.label = 'human_reply' and x.at >= ${since} and x.at < ${until})::int as replies
        from mailbox m where m.workspace_id = ${ws.workspaceId}
        order by m.email`.execute(ctx.store.db);
      // Health as the Mailboxes page shows it (mailbox/health/view.ts): what fails now, not only the stored verdict.
      const health = new Map<string, ReturnType<typeof mailboxHealth>>();
      for (const r of rows.rows) {
        health.set(r.id, mailboxHealth({ health: r.health as 'ok', healthReason: r.health_reason, settings: r.settings, syncError: r.sync_error, sendError: await lastSendError(ctx.store.db, r.id) }));
      }
      return {
        mailboxes: rows.rows.map((r) => ({
          id: r.id, email: r.email, health: health.get(r.id)!.health, healthReason: health.get(r.id)!.reason,
          sent: Number(r.sent), hardBounces: Number(r.hard), softBounces: Number(r.soft),
          bounceRate: Number(r.sent) > 0 ? Number(r.hard) / Number(r.sent) : null, replies: Number(r.replies),
        })),
      };
    },
  }),
];
