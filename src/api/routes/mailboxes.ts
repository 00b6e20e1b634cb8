import { DateTime } from 'luxon';
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import { verifyBeforeAdding } from '../../mailbox/verify-mailbox.ts';
import { lastSendError, mailboxHealth } from '../../mailbox/health/view.ts';
import { pauseMailbox, resumeMailbox } from '../../mailbox/health/pause.ts';
import { verificationOf } from '../../mailbox/verification.ts';
import { parseMailboxSettings } from '../../mailbox/settings.ts';
import { checkMailEndpoints } from '../../mailbox/mail-hosts.ts';
import { dailyCapOn } from '../../mailbox/pacing/ramp.ts';
import { effectiveCaps } from '../../mailbox/pacing/mailbox.ts';
import { scaledCap } from '../../mailbox/pacing/bucket.ts';
import { resolvePacingSettings } from '../../mailbox/pacing/settings.ts';
import { isValidZone } from '../../calendar/index.ts';
import type { ApiContext } from '../context.ts';
import { roleAtLeast, type WorkspaceAccess } from '../auth/access.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { enrollmentService } from '../context.ts';
import { removeMailbox } from '../../sending/mailbox-removal.ts';
import { askCredentialTask } from '../../sending/credential-tasks/ask-task.ts';
import type { ConnectionTestAnswer } from '../../sending/credential-tasks/test-task.ts';
import { credentialAsk } from '../context.ts';
import { listMailboxRows } from '../../mailbox/sql/mailbox-list.ts';
import { signatureColumns, MAX_SIGNATURE_HTML } from '../../mailbox/signature.ts';
import { findMailbox, insertMailbox, mailboxAddresses, updateMailbox, type MailboxChange } from '../../mailbox/sql/mailboxes.ts';
import { sendsClaimedSince } from '../../sending/sql/sends-claimed.ts';

const DAY_MS = 86_400_000;

const mailboxBody = z
  .object({
    id: z.uuid(),
    email: z.string(),
    displayName: z.string().nullable(),
    provider: z.enum(['smtp_imap', 'gmail', 'graph']),
    health: z.enum(['ok', 'warning', 'paused', 'error']),
    healthReason: z.string().nullable().describe('Why the mailbox is paused or warned (bounce rate, auth failure…)'),
    warnings: z.array(z.string()).describe("What Cadenza changed or found about the mailbox's setup (a wrong serverSavesSent switched off: src/sending/sent-copy-check.ts)"),
    dailyCap: z.number().int(),
    todayCap: z.number().int().describe("Today's cap after the ramp and the warmup cap factor: what pacing lets through today"),
    effectiveDailyCap: z.number().int().describe('The daily cap after the warmup cap factor (ramp aside): dailyCap unless warmup placement lowered it'),
    capFactor: z.number().describe("Warmup placement's factor on the daily cap: 1, or below 1 (0.5) while placement is low"),
    capReason: z.string().nullable().describe('Why the cap is lowered (the placement that did it); null when capFactor is 1'),
    sentToday: z.number().int().describe("Sends claimed since the start of the mailbox's local day"),
    ramp: z.object({ day: z.number().int(), days: z.number().int() }).nullable().describe('Ramp progress; null once ramped up or without a ramp'),
    syncError: z.string().nullable(),
    verification: z
      .enum(['verified', 'not_verified', 'failed'])
      .describe("verified: its connection test passed (OAuth mailboxes prove theirs at the provider); not_verified: added with the test skipped; failed: the last test failed"),
    signature: z
      .object({ html: z.string(), text: z.string() })
      .nullable()
      .describe('Appended to every email this mailbox sends, after the body (sanitized HTML and its plain text); null: none'),
  })
  .meta({ id: 'Mailbox' });

const endpointInput = z.object({
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65535),
  security: z.enum(['tls', 'starttls', 'none']),
  allowSelfSigned: z.boolean().default(false),
});

/** Local day number (days since the epoch in the zone) of an instant. */
function localDay(ms: number, zone: string): number {
  const d = DateTime.fromMillis(ms, { zone });
  return Math.round(DateTime.utc(d.year, d.month, d.day).toMillis() / DAY_MS);
}

async function listMailboxes(ctx: ApiContext, workspaceId: string, onlyId?: string): Promise<z.output<typeof mailboxBody>[]> {
  const now = ctx.clock.now();
  const { workspace: ws, mailboxes: rows } = await listMailboxRows(ctx.store.db, workspaceId, onlyId);
  const out: z.output<typeof mailboxBody>[] = [];
  for (const m of rows) {
    const zone = m.time_zone ?? ws.time_zone;
    const dayStart = DateTime.fromMillis(now, { zone }).startOf('day').toJSDate();
    const sent = await sendsClaimedSince(ctx.store.db, m.id, dayStart);
    // The mailbox's own caps, its workspace's defaults for those it does not set (pacing-patch.ts).
    const { dailyCap, ramp } = effectiveCaps(m, ws.settings);
    const started = new Date(m.ramp_started_at ?? m.created_at).getTime();
    const startDay = localDay(started, zone);
    const today = localDay(now, zone);
    let progress: { day: number; days: number } | null = null;
    if (ramp && ramp.step > 0) {
      const top = Math.min(dailyCap, ramp.target ?? dailyCap);
      const days = Math.max(1, Math.ceil((top - ramp.start) / ramp.step) + 1);
      const day = today - startDay + 1;
      if (day <= days) progress = { day, days };
    }
    // Health as the person needs it: the stored verdict (bounces, a pause), or what is failing now.
    const health = mailboxHealth({ health: m.health, healthReason: m.health_reason, settings: m.settings, syncError: m.last_error, sendError: await lastSendError(ctx.store.db, m.id) });
    const v = verificationOf(m.settings);
    // Placement's factor, as pacing applies it (MailboxBucket.cap): a lowered cap is shown with why.
    const capFactor = m.cap_factor !== null && m.cap_factor < 1 ? m.cap_factor : 1;
    out.push({
      id: m.id,
      email: m.email,
      displayName: m.display_name,
      signature: m.signature_html || m.signature_text ? { html: m.signature_html ?? '', text: m.signature_text ?? '' } : null,
      provider: m.provider,
      health: health.health,
      healthReason: health.reason,
      verification: v === null || v.state === 'verified' ? 'verified' : v.state === 'skipped' ? 'not_verified' : 'failed',
      warnings: [(m.settings as { sentCopyCheck?: { warning?: string } } | null)?.sentCopyCheck?.warning].filter((w): w is string => typeof w === 'string'),
      dailyCap,
      todayCap: scaledCap(dailyCapOn(dailyCap, ramp, startDay, today), capFactor),
      effectiveDailyCap: scaledCap(dailyCap, capFactor),
      capFactor,
      capReason: capFactor < 1 ? (m.cap_reason ?? 'warmup placement') : null,
      sentToday: sent,
      ramp: progress,
      syncError: m.last_error,
    });
  }
  return out;
}

/** A member changes their own mailboxes; admins and owners any mailbox of the workspace. */
export async function ownMailbox(ctx: ApiContext, ws: WorkspaceAccess, mailboxId: string): Promise<void> {
  const m = await findMailbox(ctx.store.db, ws.workspaceId, mailboxId);
  if (!m) throw cadenzaError('NOT_FOUND', 'no such mailbox in this workspace');
  if (!roleAtLeast(ws.role, 'admin') && (ws.userId === null || m.user_id !== ws.userId)) {
    throw cadenzaError('FORBIDDEN', "a member changes only their own mailboxes; ask an admin");
  }
}

const removalBody = z
  .object({
    mailboxId: z.uuid(),
    email: z.string(),
    dryRun: z.boolean().describe('true: nothing was changed; this is what a removal would do now'),
    reassigned: z.number().int().describe('Enrollments moved to another mailbox of their sequence'),
    paused: z.number().int().describe("Enrollments paused with reason 'mailbox removed'"),
    reassignedTo: z.array(z.object({ mailboxId: z.uuid(), email: z.string(), enrollments: z.number().int() })),
    pausedEnrollments: z.array(z.object({ enrollmentId: z.uuid(), reason: z.string() })),
    cancelledSends: z.number().int().describe('Queued sends cancelled (those of paused enrollments)'),
    unknownSends: z.number().int().describe('Sends whose fate is unknown: kept as they are, never sent again'),
    inFlightSends: z.number().int().describe('Sends being handed to the server now; a removal waits for them (409)'),
    credentialErased: z.boolean(),
    revocation: z
      .enum(['none', 'pending'])
      .describe('OAuth grant to revoke at the provider: none (not OAuth), pending (the sender role revokes it from a durable task, retried with backoff while the provider does not answer; the removal never waits for it)'),
  })
  .meta({ id: 'MailboxRemoval' });

export const mailboxRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/mailboxes',
    summary: "The workspace's mailboxes with health, today's sends against the cap, and ramp progress",
    tags: ['mailboxes'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ mailboxes: z.array(mailboxBody) }),
    handler: async ({ ctx, ws }) => ({ mailboxes: await listMailboxes(ctx, ws.workspaceId) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/mailboxes',
    summary: 'Add an SMTP/IMAP mailbox after testing its sign-in (verify: false skips the test); the password is stored encrypted and never returned',
    tags: ['mailboxes'],
    access: { workspace: 'member' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({
      email: z.email().max(320),
      displayName: z.string().max(200).optional(),
      username: z.string().max(320).optional(),
      password: z.string().min(1).max(1024),
      dailyCap: z.number().int().min(0).max(10_000).default(30),
      rampUp: z.boolean().default(true).describe('Start at 5 a day and add 3 a day up to the cap'),
      timeZone: z.string().refine(isValidZone, 'an IANA time zone such as Europe/Paris').optional(),
      smtp: endpointInput,
      imap: endpointInput,
      serverSavesSent: z.boolean().default(true),
      verify: z.boolean().default(true).describe('Test the SMTP and IMAP sign-in before saving (a mailbox that cannot connect is refused with what is wrong); false saves it untested, shown as not verified'),
      workingHours: z
        .object({
          workDays: z.array(z.number().int().min(1).max(7)).min(1).describe('ISO weekdays, 1 = Monday'),
          start: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM'),
          end: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM'),
          humanTiming: z.boolean().default(true).describe('Jitter the day, take a lunch break, pick up due sends after a few minutes and spread a quiet day, as a person would'),
        })
        .optional()
        .describe("When the mailbox sends, in its time zone (default Mon-Fri about 08:40-17:20 with human timing)"),
    }),
    example: () => ({
      body: {
        email: 'rep@example.test',
        password: 'app password',
        verify: false,
        smtp: { host: 'smtp.example.test', port: 587, security: 'starttls' as const },
        imap: { host: 'imap.example.test', port: 993, security: 'tls' as const },
      },
    }),
    response: mailboxBody,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const vault = ctx.vault;
      if (!vault) throw cadenzaError('CONFIG_INVALID', 'this server has no master key configured: it cannot store mailbox passwords');
      const id = newId(ctx.clock.now(), ctx.random);
      const parsed = parseMailboxSettings({ smtp: body.smtp, imap: body.imap, serverSavesSent: body.serverSavesSent });
      // Loopback, link-local (metadata) and, unless allowed, private hosts are refused (mailbox/mail-hosts.ts).
      await checkMailEndpoints([parsed.smtp, parsed.imap]);
      const settings: Record<string, unknown> = parsed;
      const wh = body.workingHours;
      if (wh) {
        const pacing = {
          workDays: wh.workDays,
          dayStart: wh.start,
          dayEnd: wh.end,
          ...(wh.humanTiming ? {} : { dayJitterMinutes: 0, lunch: null, pickupMinutes: 0, spreadDay: false }),
        };
        resolvePacingSettings(undefined, pacing, 'workingHours'); // a day too short is refused here, not at the first send
        settings.pacing = pacing;
      }
      const email = body.email.toLowerCase();
      settings.verification = await verifyBeforeAdding(
        { verify: body.verify, username: body.username || email, auth: { kind: 'password', password: body.password }, ...(parsed.imap ? { imap: parsed.imap } : {}), ...(parsed.smtp ? { smtp: parsed.smtp } : {}) },
        ctx.clock.now(),
      );
      await ctx.store.db.transaction().execute(async (tx) => {
        await insertMailbox(tx, {
          id,
          workspace_id: ws.workspaceId,
          user_id: ws.userId,
          email,
          display_name: body.displayName ?? null,
          provider: 'smtp_imap',
          daily_cap: body.dailyCap,
          ramp: JSON.stringify(body.rampUp ? { start: Math.min(5, body.dailyCap), step: 3, target: body.dailyCap } : {}),
          ramp_started_at: body.rampUp ? new Date(ctx.clock.now()) : null,
          time_zone: body.timeZone ?? null,
          settings: JSON.stringify(settings),
        });
        await vault.put(ws.workspaceId, id, { kind: 'password', username: body.username || email, password: body.password }, tx);
        await audit(c, { action: 'mailbox.connected', target: email, detail: { mailboxId: id, provider: 'smtp_imap' } }, tx);
      });
      ctx.mailboxesChanged?.();
      const [m] = await listMailboxes(ctx, ws.workspaceId, id);
      return m!;
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId/test',
    summary: "Sign in to the mailbox's SMTP and IMAP servers with its stored password and say what works",
    tags: ['mailboxes'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    response: z.object({ ok: z.boolean(), checks: z.array(z.object({ protocol: z.string(), ok: z.boolean(), message: z.string(), detail: z.string().nullable().describe("What the server said, for a disclosure") })) }).meta({ id: 'ConnectionReport' }),
    handler: async ({ ctx, ws, params }) => {
      const row = await findMailbox(ctx.store.db, ws.workspaceId, params.mailboxId);
      if (!row) throw cadenzaError('NOT_FOUND', 'no such mailbox');
      // The stored password is opened by the sender role only (least privilege): it runs the test
      // (sending/credential-tasks/test-task.ts) and records the verification; this waits for it.
      return (await askCredentialTask(credentialAsk(ctx), { workspaceId: ws.workspaceId, mailboxId: row.id, kind: 'test' })) as ConnectionTestAnswer;
    },
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId',
    summary: 'Change caps, ramp, name, time zone or signature (the owner of the mailbox, or an admin)',
    tags: ['mailboxes'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    body: z
      .object({
        displayName: z.string().max(200).nullable(),
        dailyCap: z.number().int().min(0).max(10_000),
        hourlyCap: z.number().int().min(0).max(10_000).nullable(),
        ramp: z
          .object({ start: z.number().int().min(0).max(10_000), step: z.number().int().min(0).max(10_000), target: z.number().int().min(0).max(10_000).optional() })
          .nullable()
          .describe('null: no ramp, the daily cap applies from today'),
        restartRamp: z.boolean().describe('Count the ramp from today'),
        timeZone: z.string().refine(isValidZone, 'an IANA time zone such as Europe/Paris').nullable(),
        signatureHtml: z.string().max(MAX_SIGNATURE_HTML, `a signature is at most ${MAX_SIGNATURE_HTML} characters of HTML`).nullable().describe("The signature's rich text, sanitized by the server; null or '': no signature"),
        signatureText: z.string().max(10_000).nullable().describe("The signature's plain text; left out, null or '': made from the HTML"),
      })
      .partial(),
    example: () => ({ body: { dailyCap: 40 } }),
    response: mailboxBody,
    handler: async ({ ctx, ws, params, body }) => {
      await ownMailbox(ctx, ws, params.mailboxId);
      const set: MailboxChange = {};
      if (body.displayName !== undefined) set.display_name = body.displayName;
      if (body.dailyCap !== undefined) set.daily_cap = body.dailyCap;
      if (body.hourlyCap !== undefined) set.hourly_cap = body.hourlyCap;
      if (body.ramp !== undefined) set.ramp = JSON.stringify(body.ramp ?? {});
      if (body.restartRamp) set.ramp_started_at = new Date(ctx.clock.now());
      if (body.timeZone !== undefined) set.time_zone = body.timeZone;
      if (body.signatureHtml !== undefined) Object.assign(set, signatureColumns(body.signatureHtml, body.signatureText ?? null));
      await updateMailbox(ctx.store.db, params.mailboxId, set);
      const [m] = await listMailboxes(ctx, ws.workspaceId, params.mailboxId);
      return m!;
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId/pause',
    summary: 'Pause a mailbox: it sends nothing and its queue is taken off the plan until resumed',
    tags: ['mailboxes'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    body: z.object({ reason: z.string().trim().max(200).optional() }),
    example: () => ({ body: { reason: 'on holiday' } }),
    response: mailboxBody,
    handler: async ({ ctx, ws, params, body }) => {
      await ownMailbox(ctx, ws, params.mailboxId);
      const who = ws.userId ? 'a person' : 'an API key';
      await pauseMailbox(ctx.store.db, params.mailboxId, `paused by ${who}${body.reason ? `: ${body.reason}` : ''}`, ctx.clock.now());
      const [m] = await listMailboxes(ctx, ws.workspaceId, params.mailboxId);
      return m!;
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId',
    summary:
      "Remove a mailbox (its owner or an admin): it stops sending and syncing at once, its credential is erased (an OAuth grant revoked where the provider allows), its enrollments move to another mailbox of their sequence or pause; history stays. dryRun=true says what would happen",
    tags: ['mailboxes'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    query: z.object({
      dryRun: z.enum(['true', 'false']).default('false').describe('true: change nothing, answer what a removal would do'),
      enrollments: z
        .enum(['reassign', 'pause'])
        .default('reassign')
        .describe("reassign: enrollments that have not sent from this mailbox move to another mailbox of their sequence, the others pause (a follow-up stays in its thread); pause: all pause"),
    }),
    response: removalBody,
    handler: async (c) => {
      const { ctx, ws, params, query } = c;
      await ownMailbox(ctx, ws, params.mailboxId);
      const r = await removeMailbox(
        { store: ctx.store, clock: ctx.clock, service: enrollmentService(ctx), ...(ctx.oauth?.tokens ? { tokens: ctx.oauth.tokens } : {}) },
        { workspaceId: ws.workspaceId, mailboxId: params.mailboxId, by: ws.userId, enrollments: query.enrollments, dryRun: query.dryRun === 'true' },
      );
      // Moved requests are to be planned on their new mailboxes now, not at the next poll.
      if (!r.dryRun && r.reassigned.length) ctx.workDue?.();
      // The pools' lease pass runs now, here and in other processes: the renewal of the deleted
      // leases fails, so the mailbox's sender and sync loops end and its connections close.
      if (!r.dryRun) ctx.mailboxesChanged?.();
      // An OAuth grant to revoke is a task now (its credential's deletion wrote it): a sender takes it.
      if (r.revocation === 'pending') ctx.credentialTasks?.signals?.nudge();
      if (!r.dryRun) await audit(c, { action: 'mailbox.removed', target: r.email, detail: { mailboxId: r.mailboxId, reassigned: r.reassigned.length, paused: r.paused.length } });
      const counts = new Map<string, number>();
      for (const x of r.reassigned) counts.set(x.toMailboxId, (counts.get(x.toMailboxId) ?? 0) + 1);
      const targets = await mailboxAddresses(ctx.store.db, [...counts.keys()]);
      return {
        mailboxId: r.mailboxId,
        email: r.email,
        dryRun: r.dryRun,
        reassigned: r.reassigned.length,
        paused: r.paused.length,
        reassignedTo: targets.map((t) => ({ mailboxId: t.id, email: t.email, enrollments: counts.get(t.id)! })),
        pausedEnrollments: r.paused,
        cancelledSends: r.cancelledSends,
        unknownSends: r.unknownSends,
        inFlightSends: r.inFlightSends,
        credentialErased: r.credentialErased,
        revocation: r.revocation,
      };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/mailboxes/:mailboxId/resume',
    summary: 'Resume a paused mailbox (a pause for bounces or refused credentials too, once fixed)',
    tags: ['mailboxes'],
    access: { workspace: 'member' },
    params: workspaceParams({ mailboxId: z.uuid() }),
    response: mailboxBody,
    handler: async ({ ctx, ws, params }) => {
      await ownMailbox(ctx, ws, params.mailboxId);
      if (await resumeMailbox(ctx.store.db, params.mailboxId)) ctx.mailboxesChanged?.();
      const [m] = await listMailboxes(ctx, ws.workspaceId, params.mailboxId);
      return m!;
    },
  }),
];
