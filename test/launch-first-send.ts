import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type Logger } from '../src/common/logger.ts';
import { startApp, type RunningApp } from '../src/app/app.ts';
import { SESSION_COOKIE } from '../src/api/auth/sessions.ts';
import { bedMailboxBody, mailBed, readInbox } from './mail/mailbed.ts';
import { replyMail } from './ingest/seed-sent-sequence.ts';

/**
 * "Launch → first send", as a script using the API would see it: the real app (every role in one
 * process, or the API in one and the scheduler, sender and sync roles in another on PostgreSQL),
 * a mailbox connected on the mail bed's Postfix + Dovecot, one lead, a one-step sequence with no
 * delay, no jitter and any hour; then the clock starts, the lead is enrolled over HTTP with an
 * API key, and we wait for the send request to be 'sent' and the message to be in the
 * prospect's Dovecot INBOX.
 *
 * The mailbox is connected, and leased by a sender, before the launch: the figure is the launch's
 * latency, not the first lease of a mailbox connected a second earlier. The periodic passes that
 * nudges make up for (the scheduler's refill and the day planner's pass, 30 s apart by default)
 * are set 10 minutes apart, so none can fall inside the measured window: the figure shows what the
 * nudges do, not where a poll happened to be (it used to wait for a periodic pass to go by instead,
 * half a minute a run). Each run is a fresh
 * installation, so the mailbox has sent nothing yet and no pacing gap applies (pacing still
 * rules: the measured slot is the one the day planner gives).
 *
 * With justConnected, the mailbox is connected moments before the launch instead (connect, lead,
 * sequence, enroll, with no wait): no sender or sync loop holds it yet, so the figure includes its
 * first leases (the 'mailboxes' work nudge, or the pools' 20 s balance without it). With reply, the
 * prospect then answers the email, and the reply's way into the new mailbox's sync loop is timed.
 */
export interface LaunchOptions {
  /** PostgreSQL database (already created) to run on; absent: PGlite in a temporary folder. */
  databaseUrl?: string;
  /** API in one app, the other roles in another (two processes' worth of connections and buses). PostgreSQL only. */
  split?: boolean;
  /**
   * One app per role, each on its own URL (its database user and client certificate: least
   * privilege, docs/security.md). The schema is migrated and granted beforehand by the owner.
   */
  roleUrls?: Record<'api' | 'scheduler' | 'sender' | 'sync', string>;
  rep: string;
  prospect: string;
  password: string;
  /** Connect the mailbox moments before the launch, with no wait for its sender's lease. */
  justConnected?: boolean;
  /** The prospect answers once the email is in their INBOX: time until the reply stops the enrollment. */
  reply?: boolean;
  /**
   * Enroll with `cadenza enroll` in a process of its own instead of over the API (PostgreSQL: the
   * command's NOTIFY wakes the running app). The clock then starts when the command is started.
   */
  viaCli?: boolean;
  /**
   * The launch is a resume instead: the mailbox is paused, the lead enrolled and its send parked
   * (no slot while paused); then the clock starts and the mailbox is resumed over the API.
   */
  resumeLaunch?: boolean;
  log?: Logger;
}

export interface LaunchFigures {
  /** The enroll call's answer. */
  enrollMs: number;
  /** The slot the day planner gave the send (send_at), from the launch. */
  plannedMs: number;
  /** The send request recorded 'sent'. */
  sentMs: number;
  /** The message in the prospect's INBOX (IMAP, polled every 50 ms). */
  deliveredMs: number;
  /** justConnected: the mailbox's connect call answered this long before the launch. */
  connectedBeforeMs?: number;
  /** reply: from the reply's hand-over to the mail bed's SMTP to the enrollment stopped as replied. */
  replyIngestedMs?: number;
}

/** The periodic passes' period here: far past any figure measured (file comment). */
const POLLS_APART_MS = 10 * 60_000;

export async function launchFirstSend(o: LaunchOptions): Promise<LaunchFigures> {
  if (o.split && !o.databaseUrl) throw new Error('split roles need PostgreSQL');
  if (o.viaCli && !o.databaseUrl) throw new Error('the CLI runs beside a server on PostgreSQL only (the embedded store serves one process)');
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-launch-'));
  const log = o.log ?? createLogger({ level: 'silent' });
  // One data folder for both apps: it holds the master key, which both need to open the vault.
  const common = { databaseUrl: o.databaseUrl, dataDir: dir, port: 0, host: '127.0.0.1', log, polls: { refillEveryMs: POLLS_APART_MS, planEveryMs: POLLS_APART_MS } };
  const apps: RunningApp[] = [];
  try {
    const urls = o.roleUrls;
    const api = await startApp({ ...common, ...(urls ? { databaseUrl: urls.api } : {}), roles: o.split || urls ? ['api'] : ['api', 'scheduler', 'sender', 'sync'] });
    apps.push(api);
    if (o.split) apps.push(await startApp({ ...common, roles: ['scheduler', 'sender', 'sync'] }));
    if (urls) for (const role of ['scheduler', 'sender', 'sync'] as const) apps.push(await startApp({ ...common, databaseUrl: urls[role], roles: [role] }));
    const base = api.url!;

    const setup = await fetch(`${base}/api/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ setupToken: api.setupToken!.token, email: 'owner@launch.test', password: 'a long enough password', workspaceName: 'Launch' }) });
    if (setup.status !== 201) throw new Error(`setup: ${setup.status} ${await setup.text()}`);
    const me = (await setup.json()) as { workspaces: Array<{ id: string }>; csrfToken: string };
    const ws = me.workspaces[0]!.id;
    const cookie = setup.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!.split(';')[0]!;
    const made = await fetch(`${base}/api/workspaces/${ws}/api-keys`, { method: 'POST', headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': me.csrfToken }, body: JSON.stringify({ name: 'launch script' }) });
    if (made.status !== 201) throw new Error(`api key: ${made.status} ${await made.text()}`);
    const key = ((await made.json()) as { key: string }).key;
    const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const r = await fetch(`${base}/api/workspaces/${ws}/${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return (await r.json()) as T;
    };

    const connectedAt = performance.now();
    const mailbox = await call<{ id: string }>('POST', 'mailboxes', bedMailboxBody(o.rep, o.password));
    const lead = await call<{ id: string }>('POST', 'leads', { email: o.prospect, firstName: 'Sam', company: 'Inbox Test' });
    const tag = `l${randomBytes(4).toString('hex')}`;
    const seq = await call<{ sequenceId: string }>('PUT', 'sequences', {
      key: tag,
      name: `Launch ${tag}`,
      window: 'any',
      jitterMinutes: 0,
      mailboxes: [o.rep],
      steps: [{ key: 's1', type: 'email', delay: '0 minutes', subject: `Hello {{first_name}} ${tag}`, body: 'A quick question, {{first_name}}.', title: '', variants: [] }],
    });

    const db = api.store.db;
    if (!o.justConnected) {
      // A sender owns the mailbox (its balance runs every 20 s) before the clock starts.
      await until(async () => !!(await db.selectFrom('lease').select('resource').where('resource', '=', `mailbox:${mailbox.id}`).where('expires_at', '>', new Date()).executeTakeFirst()), 60_000, 'a sender to lease the mailbox');
    }

    const request = () =>
      db.selectFrom('send_request as r').innerJoin('enrollment as e', 'e.id', 'r.enrollment_id').select(['r.state', 'r.message_id', 'r.send_at', 'r.plan_note']).where('e.lead_id', '=', lead.id).where('e.sequence_id', '=', seq.sequenceId).executeTakeFirst();
    if (o.resumeLaunch) {
      await call('POST', `mailboxes/${mailbox.id}/pause`, { reason: 'launch test' });
      await call('POST', `sequences/${seq.sequenceId}/enroll`, { leadIds: [lead.id] });
      await until(async () => !!(await request())?.plan_note?.startsWith('mailbox paused'), 60_000, 'the send to be parked by the pause');
    }

    const t0 = performance.now();
    const connectedBeforeMs = t0 - connectedAt;
    const enrolled = o.resumeLaunch
      ? (await call<{ health: string }>('POST', `mailboxes/${mailbox.id}/resume`), { enrolled: 1 })
      : o.viaCli
        ? await cliEnroll(o.databaseUrl!, tag, o.prospect)
        : await call<{ enrolled: number }>('POST', `sequences/${seq.sequenceId}/enroll`, { leadIds: [lead.id] });
    const enrollMs = performance.now() - t0;
    if (enrolled.enrolled !== 1) throw new Error(`enroll: ${JSON.stringify(enrolled)}`);
    let plannedAt: Date | null = null;
    let messageId: string | null = null;
    await until(
      async () => {
        const r = await db.selectFrom('send_request as r').innerJoin('enrollment as e', 'e.id', 'r.enrollment_id').select(['r.state', 'r.message_id', 'r.send_at', 'r.created_at']).where('e.lead_id', '=', lead.id).where('e.sequence_id', '=', seq.sequenceId).executeTakeFirst();
        plannedAt = r?.send_at ?? plannedAt;
        if (r?.state === 'sent') messageId = r.message_id;
        return messageId !== null;
      },
      120_000,
      'the send request to be sent',
      20,
    );
    const sentMs = performance.now() - t0;
    const startedAt = Date.now() - sentMs;
    const got = await readInbox(o.prospect, o.password, messageId!, { waitMs: 60_000 });
    const deliveredMs = performance.now() - t0;
    if (got.length === 0) throw new Error(`message ${messageId} never reached ${o.prospect}`);
    let replyIngestedMs: number | undefined;
    if (o.reply) {
      const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
      const raw = replyMail({ from: o.prospect, to: o.rep, inReplyTo: messageId!, subject: `Re: Hello Sam ${tag}`, body: 'Sounds good, call me on Tuesday.', messageId: `<reply.${tag}@launch.test>` });
      const r0 = performance.now();
      await smtp.sendMail({ envelope: { from: o.prospect, to: [o.rep] }, raw });
      smtp.close();
      await until(
        async () => (await db.selectFrom('enrollment').select('state').where('lead_id', '=', lead.id).where('sequence_id', '=', seq.sequenceId).executeTakeFirst())?.state === 'replied',
        60_000,
        'the reply to stop the enrollment',
        20,
      );
      replyIngestedMs = performance.now() - r0;
    }
    return {
      enrollMs,
      plannedMs: plannedAt ? Math.max(0, (plannedAt as Date).getTime() - startedAt) : NaN,
      sentMs,
      deliveredMs,
      ...(o.justConnected ? { connectedBeforeMs } : {}),
      ...(replyIngestedMs !== undefined ? { replyIngestedMs } : {}),
    };
  } finally {
    for (const a of apps.reverse()) await a.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

const cli = new URL('../bin/cadenza.js', import.meta.url).pathname;

async function cliEnroll(databaseUrl: string, sequenceKey: string, lead: string): Promise<{ enrolled: number }> {
  const { stdout } = await promisify(execFile)(process.execPath, [cli, '--database-url', databaseUrl, '--json', 'enroll', '--sequence', sequenceKey, '--lead', lead]);
  return JSON.parse(stdout) as { enrolled: number };
}

async function until(check: () => Promise<boolean>, ms: number, what: string, everyMs = 100): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
