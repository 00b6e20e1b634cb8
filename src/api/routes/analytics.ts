import { sql } from 'kysely';
import { z } from 'zod';
import { defineRoute, workspaceParams } from '../http/route.ts';

const DAY_MS = 86_400_000;

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const analyticsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics',
    summary: 'Sends, replies, bounces and unsubscribes per UTC day, the per-step funnel, and reply-to-stop latency percentiles',
    tags: ['analytics'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({ days: z.coerce.number().int().min(1).max(366).default(30) }),
    response: z
      .object({
        days: z.array(z.object({ day: z.string(), sends: z.number().int(), replies: z.number().int(), bounces: z.number().int(), unsubscribes: z.number().int() })),
        funnel: z.array(z.object({ sequenceName: z.string(), stepKey: z.string(), sent: z.number().int(), replied: z.number().int() })),
        variants: z
          .array(z.object({ sequenceName: z.string(), stepKey: z.string(), variantKey: z.string(), sent: z.number().int(), replied: z.number().int() }))
          .describe('Email steps with more than one variant: sends of each, and how many of those enrollments ended replied'),
        replyToStop: z.object({ count: z.number().int(), p50Ms: z.number().nullable(), p90Ms: z.number().nullable(), p99Ms: z.number().nullable() }),
      })
      .meta({ id: 'Analytics' }),
    handler: async ({ ctx, ws, query }) => {
      const db = ctx.store.db;
      const now = ctx.clock.now();
      const firstDay = Math.floor(now / DAY_MS) - query.days + 1;
      const since = new Date(firstDay * DAY_MS);
      // The engine's journal has one row per applied event: the one source for every count here.
      const counts = await db
        .selectFrom('event')
        .select([sql<string>`to_char(date_trunc('day', at at time zone 'UTC'), 'YYYY-MM-DD')`.as('day'), 'type', (eb) => eb.fn.countAll<string>().as('n')])
        .where('workspace_id', '=', ws.workspaceId)
        .where('at', '>=', since)
        .where('type', 'in', ['step_sent', 'reply', 'bounce', 'unsubscribe'])
        .groupBy([sql`1`, 'type'])
        .execute();
      const days = Array.from({ length: query.days }, (_, i) => ({ day: new Date((firstDay + i) * DAY_MS).toISOString().slice(0, 10), sends: 0, replies: 0, bounces: 0, unsubscribes: 0 }));
      const byDay = new Map(days.map((d) => [d.day, d]));
      const field = { step_sent: 'sends', reply: 'replies', bounce: 'bounces', unsubscribe: 'unsubscribes' } as const;
      for (const c of counts) {
        const d = byDay.get(c.day);
        const f = field[c.type as keyof typeof field];
        if (d && f) d[f] += Number(c.n);
      }

      const funnel = await db
        .selectFrom('step as st')
        .innerJoin('sequence as s', 's.id', 'st.sequence_id')
        .select((eb) => [
          's.name',
          'st.key',
          eb.selectFrom('send_request as r').select((e2) => e2.fn.countAll<string>().as('n')).whereRef('r.step_id', '=', 'st.id').where('r.state', '=', 'sent').as('sent'),
          eb.selectFrom('enrollment as e').select((e2) => e2.fn.countAll<string>().as('n')).whereRef('e.last_step_id', '=', 'st.id').where('e.state', '=', 'replied').as('replied'),
        ])
        .where('s.workspace_id', '=', ws.workspaceId)
        .where('st.archived_at', 'is', null)
        .where('st.kind', '=', 'email')
        .orderBy('s.created_at')
        .orderBy('st.position')
        .execute();

      const variants = await db
        .selectFrom('variant as v')
        .innerJoin('step as st', 'st.id', 'v.step_id')
        .innerJoin('sequence as s', 's.id', 'st.sequence_id')
        .select((eb) => [
          's.name',
          'st.key as step_key',
          'v.key',
          eb.selectFrom('send_request as r').select((e2) => e2.fn.countAll<string>().as('n')).whereRef('r.variant_id', '=', 'v.id').where('r.state', '=', 'sent').as('sent'),
          eb
            .selectFrom('send_request as r')
            .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
            .select((e2) => e2.fn.count<string>('r.enrollment_id').distinct().as('n'))
            .whereRef('r.variant_id', '=', 'v.id')
            .where('r.state', '=', 'sent')
            .where('e.state', '=', 'replied')
            .as('replied'),
        ])
        .where('s.workspace_id', '=', ws.workspaceId)
        .where('v.archived_at', 'is', null)
        .where('st.archived_at', 'is', null)
        .where((eb) => eb.exists(eb.selectFrom('variant as o').select('o.id').whereRef('o.step_id', '=', 'v.step_id').whereRef('o.id', '<>', 'v.id').where('o.archived_at', 'is', null)))
        .orderBy('s.created_at')
        .orderBy('st.position')
        .orderBy('v.key')
        .execute();

      // Reply to stop: the reply's arrival at the mailbox (server receipt) to the engine's journal entry.
      const lat = await db
        .selectFrom('event as ev')
        .innerJoin('message as m', (j) => j.onRef('m.enrollment_id', '=', 'ev.enrollment_id').on('m.direction', '=', 'inbound').on('m.label', '=', 'human_reply'))
        .select(['ev.at as stopped', 'm.received_at', 'm.at'])
        .where('ev.workspace_id', '=', ws.workspaceId)
        .where('ev.type', '=', 'reply')
        .where('ev.at', '>=', since)
        .limit(100_000)
        .execute();
      const ms = lat.map((r) => new Date(r.stopped).getTime() - new Date(r.received_at ?? r.at).getTime()).filter((x) => x >= 0).sort((a, b) => a - b);
      return {
        days,
        funnel: funnel.map((f) => ({ sequenceName: f.name, stepKey: f.key, sent: Number(f.sent), replied: Number(f.replied) })),
        variants: variants.map((v) => ({ sequenceName: v.name, stepKey: v.step_key, variantKey: v.key, sent: Number(v.sent), replied: Number(v.replied) })),
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
      const since = new Date(ctx.clock.now() - query.days * DAY_MS);
      const rows = await sql<{ id: string; email: string; health: string; health_reason: string | null; sent: number; hard: number; soft: number; replies: number }>`
        select m.id, case when m.removed_at is null then m.email else m.email || ' (removed mailbox)' end as email, m.health, m.health_reason,
          (select count(*) from send_request r where r.mailbox_id = m.id and r.state = 'sent' and r.updated_at >= ${since})::int as sent,
          (select count(*) from send_request r where r.mailbox_id = m.id and r.bounced_at >= ${since} and r.bounce_kind = 'hard')::int as hard,
          (select count(*) from send_request r where r.mailbox_id = m.id and r.bounced_at >= ${since} and r.bounce_kind = 'soft')::int as soft,
          (select count(*) from message x where x.mailbox_id = m.id and x.direction = 'inbound' and x.label = 'human_reply' and x.at >= ${since})::int as replies
        from mailbox m where m.workspace_id = ${ws.workspaceId}
        order by m.email`.execute(ctx.store.db);
      return {
        mailboxes: rows.rows.map((r) => ({
          id: r.id, email: r.email, health: r.health, healthReason: r.health_reason,
          sent: Number(r.sent), hardBounces: Number(r.hard), softBounces: Number(r.soft),
          bounceRate: Number(r.sent) > 0 ? Number(r.hard) / Number(r.sent) : null, replies: Number(r.replies),
        })),
      };
    },
  }),
];
