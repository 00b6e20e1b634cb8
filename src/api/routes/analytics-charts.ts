import { z } from 'zod';
import { defineRoute, workspaceParams } from '../http/route.ts';
import type { Db } from '../../store/store.ts';
import { figuresWindow, perDay, totalsOf, type Window } from '../../ops/figures.ts';
import { FUNNEL_STAGES, sequenceFunnel } from '../../ops/figures-funnel.ts';
import { replyTimes } from '../../ops/figures-reply-time.ts';
import { bestHours, byHour, sendHourCells } from '../../ops/figures-send-hours.ts';
import { mailboxDays } from '../../ops/figures-mailbox-days.ts';
import { checkFigureIds, windowQuery } from './analytics.ts';

/**
 * The Analytics screen's charts (issue 18): a sequence's funnel, reply time after send, the best
 * send hours in the prospect's time, and each mailbox's health per day. Every figure is defined and
 * computed in ops/ (figures-*.ts), on the window and facts of GET …/analytics; these handlers pick
 * the window and shape the answer.
 */

const windowShape = z.object({ since: z.string(), until: z.string() }).describe("The window's first local midnight and the one after its last day");

/** The reads of the source (reply times, send hours) and of quarter hours (mailbox days): at most 90 days. */
const shortWindowQuery = windowQuery.extend({ days: z.coerce.number().int().min(1).max(90).default(30) });

type WindowQuery = { days: number; zone: string; sequenceId?: string | undefined; mailboxId?: string | undefined };

/**
 * A chart's route: GET …/analytics/<path>, a member's read, answered with the window (its zone and
 * span, as GET …/analytics picks it) and what `compute` makes of it.
 */
function chartRoute<Q extends z.ZodType<WindowQuery>, S extends z.ZodRawShape>(o: {
  path: string;
  summary: string;
  id: string;
  query: Q;
  shape: S;
  compute: (db: Db, workspaceId: string, w: Window, q: z.infer<Q>) => Promise<z.input<z.ZodObject<S>>>;
}) {
  return defineRoute({
    method: 'GET',
    url: `/api/workspaces/:workspaceId/analytics/${o.path}`,
    summary: o.summary,
    tags: ['analytics'],
    access: { workspace: 'viewer' },
    example: () => ({ query: { days: 30, zone: 'Europe/Berlin' } as z.input<Q> }),
    params: workspaceParams({}),
    query: o.query,
    // Typed by `compute`'s answer; the schema (validation, OpenAPI, the web's types) stays whole.
    response: z.object({ zone: z.string(), window: windowShape, ...o.shape }).meta({ id: o.id }) as z.ZodType<unknown>,
    handler: async ({ ctx, ws, query }) => {
      await checkFigureIds(ctx.store.db, ws.workspaceId, query);
      const w = await figuresWindow(ctx.store.db, ws.workspaceId, ctx.clock.now(), query.days, query.zone);
      return { zone: w.zone, window: { since: w.since.toISOString(), until: w.until.toISOString() }, ...(await o.compute(ctx.store.db, ws.workspaceId, w, query)) };
    },
  });
}

const hourFigures = z.object({ hour: z.number().int(), sends: z.number().int(), replies: z.number().int(), replyRate: z.number().nullable() });

export const analyticsChartRoutes = [
  chartRoute({
    path: 'funnel',
    summary: "A sequence's (or the workspace's) funnel over the window: sent, delivered (sent less bounced), opened by a person, clicked, replied, interested replies and meetings, with each stage's conversion from the one before",
    id: 'AnalyticsFunnel',
    query: windowQuery,
    shape: {
      stages: z
        .array(
          z.object({
            key: z.enum(FUNNEL_STAGES.map((s) => s.key) as [string, ...string[]]),
            label: z.string(),
            count: z.number().int(),
            conversion: z.number().nullable().describe('count / the stage before (null: first stage, or none before)'),
            ofSent: z.number().nullable().describe('count / sent'),
          }),
        )
        .describe("Counted in the window by when each happened (the headline's totals), not per cohort"),
    },
    // The headline's own per-day read (the rollup), summed: the funnel and the cards cannot disagree.
    compute: async (db, workspaceId, w, q) => ({ stages: sequenceFunnel(totalsOf(await perDay(db, workspaceId, w, { sequenceId: q.sequenceId }))) }),
  }),
  chartRoute({
    path: 'reply-times',
    summary: 'Reply time after send: for the replies in the window, the time since the email each is credited to was sent, in buckets (under 1 h … over 7 days) with the median',
    id: 'AnalyticsReplyTimes',
    query: shortWindowQuery,
    shape: {
      count: z.number().int().describe('Replies with an email before them'),
      noEmailBefore: z.number().int().describe('Replies with no email sent before them (no reply time)'),
      medianMs: z.number().nullable().describe('Nearest-rank median, ms'),
      buckets: z.array(z.object({ key: z.string(), label: z.string(), fromMs: z.number(), toMs: z.number().nullable(), count: z.number().int() })),
    },
    compute: (db, workspaceId, w, q) => replyTimes(db, workspaceId, w, { sequenceId: q.sequenceId }),
  }),
  chartRoute({
    path: 'send-hours',
    summary: "Sends and reply rate by the hour of day (and ISO weekday) in the prospect's time at send (the lead's zone, else the workspace's), and which hours did best when enough sends allow it",
    id: 'AnalyticsSendHours',
    query: shortWindowQuery,
    shape: {
      sends: z.number().int(),
      hours: z.array(hourFigures).describe('All 24 hours of the prospect\'s day, every weekday together'),
      cells: z.array(z.object({ weekday: z.number().int().describe('ISO: 1 Monday … 7 Sunday'), hour: z.number().int(), sends: z.number().int(), replies: z.number().int() })).describe('Hours with sends or replies, by weekday'),
      best: z.object({ enough: z.boolean(), minSends: z.number().int().describe('Sends an hour needs to be compared'), hours: z.array(hourFigures), text: z.string() }),
    },
    compute: async (db, workspaceId, w, q) => {
      const cells = await sendHourCells(db, workspaceId, w, { sequenceId: q.sequenceId });
      const hours = byHour(cells);
      return { sends: hours.reduce((n, h) => n + h.sends, 0), hours, cells, best: bestHours(hours) };
    },
  }),
  chartRoute({
    path: 'mailbox-days',
    summary: "Each mailbox's (or one's) sends, bounces and bounce rate per day of the window, and the inbox or junk placement its warmup mail found",
    id: 'AnalyticsMailboxDays',
    query: shortWindowQuery.omit({ sequenceId: true }).extend({ mailboxId: z.uuid().optional().describe('One mailbox; none: every mailbox of the workspace') }),
    shape: {
      mailboxes: z.array(
        z.object({
          id: z.uuid(),
          email: z.string(),
          days: z.array(
            z.object({
              day: z.string(),
              sends: z.number().int(),
              bounces: z.number().int(),
              hardBounces: z.number().int(),
              bounceRate: z.number().nullable(),
              inbox: z.number().int().describe('Warmup mail its receivers found in the inbox'),
              junk: z.number().int().describe('… and in junk'),
            }),
          ),
        }),
      ),
    },
    compute: async (db, workspaceId, w, q) => ({ mailboxes: await mailboxDays(db, workspaceId, w, q.mailboxId) }),
  }),
];
