import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { mailboxOfWorkspace } from '../../mailbox/sql/mailboxes.ts';
import { findSequenceId } from '../../sequence/sql/sequences.ts';
import type { Db } from '../../store/store.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { lastSendError, mailboxHealth } from '../../mailbox/health/view.ts';
import { csvRecord } from '../../common/csv-write.ts';
import { breakdownCsv } from '../../ops/breakdown-csv.ts';
import { BREAKDOWN_BY, breakdown, CALL_FIGURE_OUTCOMES, callFigures, DAY_SERIES, figuresWindow, funnel, headlineOf, isKnownZone, perDay, perMailbox, RATES, ratesOf, totalsOf, variantsAllTime, type Window } from '../../ops/figures.ts';

/** Per-day counts of every series (ops/figures.ts perDay says what each counts). */
const seriesCounts = z.object(Object.fromEntries(DAY_SERIES.map((k) => [k, z.number().int()])) as Record<(typeof DAY_SERIES)[number], z.ZodNumber>);

/** The window and the calendar the figures are counted in: `days` whole days of `zone`. */
export const windowQuery = z.object({
  days: z.coerce.number().int().min(1).max(366).default(30),
  zone: z
    .string()
    .max(64)
    .default('UTC')
    .refine(isKnownZone, { message: 'zone must be an IANA time zone name, such as Europe/Berlin or America/New_York' })
    .describe('The IANA time zone whose calendar days the figures are counted by (default UTC)'),
  sequenceId: z.uuid().optional().describe("One sequence's figures (its enrollments' facts, its steps); none: the whole workspace"),
});

/**
 * The figures of a sequence or a mailbox the workspace does not have are a 404, not a page of
 * zeros that reads as "nothing happened" (an id mistyped, stale, or another workspace's).
 */
export async function checkFigureIds(db: Db, workspaceId: string, q: { sequenceId?: string | undefined; mailboxId?: string | undefined }): Promise<void> {
  if (q.sequenceId !== undefined && !(await findSequenceId(db, workspaceId, q.sequenceId))) throw cadenzaError('NOT_FOUND', 'no such sequence in this workspace', { field: 'sequenceId' });
  if (q.mailboxId !== undefined && !(await mailboxOfWorkspace(db, workspaceId, q.mailboxId))) throw cadenzaError('NOT_FOUND', 'no such mailbox in this workspace', { field: 'mailboxId' });
}

const breakdownQuery = windowQuery.extend({
  by: z.enum(BREAKDOWN_BY).describe('What each row is: a sequence, an email step, a variant, a mailbox, or a rep (the member who owns the mailbox)'),
});

const breakdownRow = seriesCounts.extend({
  key: z.string().nullable().describe("The sequence's, step's, variant's, mailbox's or member's id; null: the facts none can be credited to"),
  label: z.string(),
  hardBounces: z.number().int(),
  softBounces: z.number().int(),
  ...(Object.fromEntries(RATES.map((k) => [k, z.number().nullable()])) as Record<(typeof RATES)[number], z.ZodNullable<z.ZodNumber>>),
});

/** The breakdown of the window (ops/figures.ts breakdown), each row with its rates. */
async function breakdownOf(ctx: { store: { db: Parameters<typeof breakdown>[0] }; clock: { now(): number } }, workspaceId: string, q: z.infer<typeof breakdownQuery>) {
  await checkFigureIds(ctx.store.db, workspaceId, q);
  const w = await figuresWindow(ctx.store.db, workspaceId, ctx.clock.now(), q.days, q.zone);
  const rows = await breakdown(ctx.store.db, workspaceId, w, q.by, { sequenceId: q.sequenceId });
  return { window: w, rows: rows.map((r) => ({ ...r, ...ratesOf(r) })) };
}

const spanOf = (w: Window) => ({ since: w.since.toISOString(), until: w.until.toISOString() });

/**
 * The Analytics routes: every figure here is defined, and computed, in ops/figures.ts (what counts,
 * the window and its clock, the percentile method), the module `cadenza status`, the demo's
 * progress and /metrics read too. These handlers only pick the window and shape the answer.
 */
export const analyticsRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics',
    summary: 'Sends, opens (by a person and automatic), clicks, replies, positive replies, meetings, bounces and unsubscribes per day of the chosen time zone, the totals and those of the period before, the per-step funnel and variants over the same window, calls by outcome, and reply-to-stop latency percentiles (real ms)',
    tags: ['analytics'],
    access: { workspace: 'viewer' },
    params: workspaceParams({}),
    query: windowQuery,
    response: z
      .object({
        asOf: z.string().describe('The window ends with this instant\'s day in `zone`: the later of now and the latest journal entry (a demo runs its clock ahead of the real date)'),
        zone: z.string(),
        window: z.object({ since: z.string(), until: z.string() }).describe('The window\'s first local midnight and the one after its last day'),
        totals: seriesCounts.describe('The sums of days[]: the headline figures'),
        previous: z.object({ since: z.string(), until: z.string(), totals: seriesCounts }).describe('The same number of days just before the window, for comparison'),
        days: z.array(seriesCounts.extend({ day: z.string().describe('YYYY-MM-DD in zone') })),
        funnel: z
          .array(z.object({ sequenceName: z.string(), stepKey: z.string(), removed: z.boolean(), sent: z.number().int(), replied: z.number().int() }))
          .describe('Per email step, over the same window: sends, and replies credited to the last email sent before them'),
        unattributedReplies: z.number().int().describe('Replies in the window with no email sent before them (not in the funnel)'),
        variants: z
          .array(z.object({ sequenceName: z.string(), stepKey: z.string(), variantKey: z.string(), sent: z.number().int(), replied: z.number().int() }))
          .describe('Email steps with more than one variant: sends of each in the window, and the replies credited to it'),
        calls: z
          .object({
            calls: z.number().int(),
            outcomes: z.object(Object.fromEntries(CALL_FIGURE_OUTCOMES.map((k) => [k, z.number().int()])) as Record<(typeof CALL_FIGURE_OUTCOMES)[number], z.ZodNumber>),
            answered: z.number().int(),
            talkMs: z.number().int(),
          })
          .describe('Calls begun in the window, by outcome (unlogged: none given yet), answered ones and their talk time'),
        replyToStop: z.object({ count: z.number().int(), p50Ms: z.number().nullable(), p90Ms: z.number().nullable(), p99Ms: z.number().nullable() }).describe('Inbound messages received in the window that stopped or paused their enrollment, and the nearest-rank percentiles of the time from the server\'s receipt to the stop, in real milliseconds even on a demo\'s accelerated clock (ops/figures.ts)'),
      })
      .meta({ id: 'Analytics' }),
    handler: async ({ ctx, ws, query }) => {
      await checkFigureIds(ctx.store.db, ws.workspaceId, query);
      const only = { sequenceId: query.sequenceId };
      const w = await figuresWindow(ctx.store.db, ws.workspaceId, ctx.clock.now(), query.days, query.zone);
      // The headline, the funnel and the calls are independent reads: at once, on as many
      // connections.
      const [h, f, calls] = await Promise.all([headlineOf(ctx.store.db, ws.workspaceId, w, only), funnel(ctx.store.db, ws.workspaceId, w, only), callFigures(ctx.store.db, ws.workspaceId, w, only)]);
      return {
        asOf: new Date(h.window.asOf).toISOString(),
        zone: h.window.zone,
        window: spanOf(h.window),
        totals: h.totals,
        previous: { ...spanOf(h.previous.window), totals: h.previous.totals },
        days: h.days,
        funnel: f.funnel,
        variants: f.variants,
        unattributedReplies: Math.max(0, h.totals.replies - f.creditedReplies),
        calls,
        replyToStop: h.replyToStop,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics/days.csv',
    summary: 'The per-day figures of GET …/analytics as CSV: one row per day of the chosen time zone, one column per series',
    tags: ['analytics'],
    access: { workspace: 'viewer' },
    params: workspaceParams({}),
    query: windowQuery,
    response: z.string().describe('text/csv'),
    handler: async ({ ctx, ws, query, reply }) => {
      // The days alone: the headline's previous period and reply-to-stop are not in the file.
      await checkFigureIds(ctx.store.db, ws.workspaceId, query);
      const w = await figuresWindow(ctx.store.db, ws.workspaceId, ctx.clock.now(), query.days, query.zone);
      const days = await perDay(ctx.store.db, ws.workspaceId, w, { sequenceId: query.sequenceId });
      const lines = [csvRecord(['day', ...DAY_SERIES]), ...days.map((d) => csvRecord([d.day, ...DAY_SERIES.map((k) => String(d[k]))]))];
      const name = `analytics-${days[0]!.day}-to-${days.at(-1)!.day}.csv`;
      reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}"`);
      return lines.join('');
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics/breakdown',
    summary: "The window's figures (the series of GET …/analytics, bounces hard and soft, and each rate per email sent) per sequence, email step, variant, mailbox or rep: every fact credited to one email, so the rows sum to the headline",
    tags: ['analytics'],
    access: { workspace: 'viewer' },
    example: () => ({ query: { by: 'step' as const } }),
    params: workspaceParams({}),
    query: breakdownQuery,
    response: z
      .object({
        by: z.enum(BREAKDOWN_BY),
        zone: z.string(),
        window: z.object({ since: z.string(), until: z.string() }),
        rows: z.array(breakdownRow).describe('Most sends first; the row with key null (facts with no email before them, or none recorded) last'),
        totals: seriesCounts.describe("The rows' sums: GET …/analytics' totals for the same window"),
      })
      .meta({ id: 'AnalyticsBreakdown' }),
    handler: async ({ ctx, ws, query }) => {
      const b = await breakdownOf(ctx, ws.workspaceId, query);
      return { by: query.by, zone: b.window.zone, window: spanOf(b.window), rows: b.rows, totals: totalsOf(b.rows) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics/breakdown.csv',
    summary: 'GET …/analytics/breakdown as CSV: one row per sequence, step, variant, mailbox or rep, one column per figure and rate',
    tags: ['analytics'],
    access: { workspace: 'viewer' },
    example: () => ({ query: { by: 'step' as const } }),
    params: workspaceParams({}),
    query: breakdownQuery,
    response: z.string().describe('text/csv'),
    handler: async ({ ctx, ws, query, reply }) => {
      const b = await breakdownOf(ctx, ws.workspaceId, query);
      reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="analytics-by-${query.by}-${b.window.dayKeys[0]}-to-${b.window.dayKeys.at(-1)}.csv"`);
      return breakdownCsv(query.by, b.rows);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics/variants',
    summary: "Reply rate per variant over the whole journal: sends of each variant, and the replies credited to it (it was the last email the prospect got before replying)",
    tags: ['analytics'],
    access: { workspace: 'viewer' },
    params: workspaceParams({}),
    query: z.object({ sequenceId: z.uuid().optional() }),
    response: z.object({
      variants: z.array(
        z.object({ sequenceId: z.uuid(), sequenceName: z.string(), stepKey: z.string(), variantKey: z.string(), sent: z.number().int(), replied: z.number().int(), replyRate: z.number().nullable() }),
      ),
    }),
    handler: async ({ ctx, ws, query }) => {
      await checkFigureIds(ctx.store.db, ws.workspaceId, query);
      // Over the whole journal (ops/figures.ts): a reply is credited to the variant of the last email the prospect got before it.
      const variants = await variantsAllTime(ctx.store.db, ws.workspaceId, query.sequenceId);
      return {
        variants: variants.map((v) => ({
          sequenceId: v.sequenceId, sequenceName: v.sequenceName, stepKey: v.stepKey, variantKey: v.variantKey,
          sent: v.sent, replied: v.replied, replyRate: v.sent > 0 ? v.replied / v.sent : null,
        })),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/analytics/mailboxes',
    summary: 'Per-mailbox health over the analytics window: sends, hard and soft bounces, bounce rate, replies credited to its emails, and the current health with its reason',
    tags: ['analytics'],
    access: { workspace: 'viewer' },
    params: workspaceParams({}),
    query: z.object({ days: z.coerce.number().int().min(1).max(90).default(7), zone: windowQuery.shape.zone }),
    response: z.object({
      mailboxes: z.array(
        z.object({
          id: z.uuid(), email: z.string(), health: z.string(), healthReason: z.string().nullable(),
          sent: z.number().int(), hardBounces: z.number().int(), softBounces: z.number().int(), bounceRate: z.number().nullable(), replies: z.number().int(),
        }),
      ),
    }),
    handler: async ({ ctx, ws, query }) => {
      // The same window and definitions as GET …/analytics (ops/figures.ts): sends by the mailbox of their request, replies by the mailbox of the email they are credited to.
      const w = await figuresWindow(ctx.store.db, ws.workspaceId, ctx.clock.now(), query.days, query.zone);
      const rows = await perMailbox(ctx.store.db, ws.workspaceId, w);
      const mailboxes = [];
      for (const r of rows) {
        // Health as the Mailboxes page shows it (mailbox/health/view.ts): what fails now, not only the stored verdict.
        const health = mailboxHealth({ health: r.health as 'ok', healthReason: r.healthReason, settings: r.settings, syncError: r.syncError, sendError: await lastSendError(ctx.store.db, r.id) });
        mailboxes.push({
          id: r.id, email: r.email, health: health.health, healthReason: health.reason,
          sent: r.sent, hardBounces: r.hardBounces, softBounces: r.softBounces,
          bounceRate: r.sent > 0 ? r.hardBounces / r.sent : null, replies: r.replies,
        });
      }
      return { mailboxes };
    },
  }),
];
