import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { sql } from 'kysely';
import { seededRandom } from '../../src/common/random.ts';
import { systemClock } from '../../src/common/clock.ts';
import { localKeyWrapper, Vault } from '../../src/mailbox/vault.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { EnrollmentService } from '../../src/sequence/enrollment-service.ts';
import { moveEnrollments } from '../../src/sequence/move.ts';
import { migrate } from '../../src/store/migrate.ts';
import { stepMessageId } from '../../src/sending/step-message-id.ts';
import { openStore, type Store } from '../../src/store/store.ts';
import { replyMail } from '../ingest/seed-sent-sequence.ts';
import { bedEndpoint, mailBed } from '../mail/mailbed.ts';

/**
 * The point-in-time recovery drill (docs/operations.md, "Point-in-time recovery"):
 *
 *   1. a PostgreSQL cluster archiving its WAL to pgBackRest (pg-pitr.sh), Cadenza's schema, a
 *      workspace with `mailboxes` mailboxes of the mail bed, a nurture sequence holding
 *      `nurtureLeads` enrollments (their first email days away: the data to protect) and an
 *      outreach sequence sending now (`sendingLeads` per mailbox, an intro and a follow-up a
 *      minute later); `cadenza backup` (full);
 *   2. `cadenza start --roles scheduler,sender` sends; the restore point is taken mid-way;
 *   3. the bad bulk action, through the functions the API routes call: every nurture enrollment
 *      moved to the outreach sequence at step one (POST /enrollments/move, in batches of 1,000)
 *      and the wrong list (`wrongLeads` leads) enrolled in it (POST /sequences/:id/enroll);
 *      Cadenza goes on sending (the steps sent after the restore point: the good ones and some of
 *      the bad action's own);
 *   4. Cadenza stopped, PostgreSQL stopped (its last WAL archived), `cadenza restore --to` the
 *      restore point, PostgreSQL started (replay, promote), `cadenza reconcile-sent --since` it,
 *      Cadenza started again until every outreach step is settled.
 *
 * With `replies`, the sync role runs too (from before the restore point, so that each mailbox's
 * cursor is in the data the restore brings back), and that many prospects answer their intro after
 * the restore point: the lost database stops those enrollments, the restore brings them back active
 * with the intro unrecorded and the cursors from before the replies; reconcile-sent records the
 * intro and plans the follow-up; the sync, pulling from the restored cursor, reads the reply again
 * and stops the enrollment. The follow-up must never be sent (the sender's last look and the
 * re-check in its claim stand between a due follow-up and a reply the sync has not read yet).
 *
 * Verdict: the restored data is the restore point's (nurture enrollments all back and waiting,
 * no wrong-list enrollment); every good step that went out after the restore point is recorded
 * sent by the reconcile; no Message-ID twice in any prospect INBOX (a step's Message-ID is derived
 * from its key, so a step sent again would show as a twin); every outreach step ends sent, but
 * the follow-ups of the prospects who replied, which are never sent (nor in their INBOX).
 *
 * Mail-bed users: sync57..60 (the mailboxes; the server files their Sent copies), prospects are
 * plus-addresses of sync61..63, tagged per run.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsxLoader = join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
const pitrScript = join(root, 'test', 'ops', 'pg-pitr.sh');
const run = promisify(execFile);
const pass = 'pass';
const user = (n: number) => `sync${n}@inbox.test`;
const prospectUsers = [61, 62, 63];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Until `check` answers something other than null/false, or `withinMs` passes (then its last answer). */
async function poll<T>(check: () => Promise<T>, withinMs: number): Promise<T> {
  const until = Date.now() + withinMs;
  for (;;) {
    const v = await check();
    if (v || Date.now() > until) return v;
    await sleep(200);
  }
}

export interface PitrDrillOptions {
  /** 1..4 mailboxes (sync57..60). */
  mailboxes: number;
  /** Outreach leads per mailbox: intro now, follow-up a minute later (none when `followUp` is false). */
  sendingLeads: number;
  followUp: boolean;
  nurtureLeads: number;
  wrongLeads: number;
  /** The restore point is taken once this many outreach steps are recorded sent. */
  sentBeforeRestorePoint: number;
  /** After the bad action, Cadenza sends until this many more steps are recorded, then is stopped. */
  sentAfterBadAction: number;
  pitrDir: string;
  port: number;
  /** Prospects who answer their intro after the restore point (needs `followUp`; runs the sync role). */
  replies?: number;
  /** The control run: no reconcile after the restore (the steps sent after the restore point then go twice). */
  skipReconcile?: boolean;
  log?: (line: string) => void;
}

export interface PitrDrillReport {
  restorePoint: string;
  backupMs: number;
  /** Rows in the restored database's main tables, and the enrollments by sequence and state. */
  restored: { rows: Record<string, number>; nurtureWaiting: number; outreachEnrollments: number; wrongListEnrollments: number; movedEnrollments: number };
  /** Good outreach steps recorded sent after the restore point on the database that was lost. */
  goodSentAfterRestorePoint: number;
  /** Steps the bad action's enrollments sent before Cadenza was stopped (delivered; no restore can unsend them). */
  badActionSends: number;
  reconciled: { recorded: number; possiblySent: number; alreadyRecorded: number; unmatched: number; conflicts: number };
  /**
   * The replies that arrived between the restore point and the restore: sent; stopped in the lost
   * database; cursors the restored data holds (one per mailbox: the sync starts again from before
   * the replies); replying enrollments stopped again after the restore, and how long after Cadenza
   * started the last one was; their follow-ups sent (send requests sent, or found in the prospect's
   * INBOX): must be none.
   */
  replies: { sent: number; stoppedBeforeRestore: number; restoredCursors: number; stoppedAfterRestore: number; restopMs: number | null; followUpsSent: string[] };
  /** Good steps sent after the restore point that the reconcile did not record. */
  missed: string[];
  duplicates: string[];
  unsettled: string[];
  outreachSteps: number;
  timings: { stopToRestoredMs: number; restoreMs: number; reconcileMs: number; recoveryMs: number; settleMs: number };
  output: string;
}

export async function pitrTools(): Promise<string | null> {
  try {
    await run('bash', ['-c', 'command -v pgbackrest && (command -v pg_ctl || test -x "$(pg_config --bindir)/pg_ctl")']);
    return null;
  } catch {
    return 'pgBackRest or the PostgreSQL server binaries are not installed (Debian: pgbackrest, postgresql)';
  }
}

function noonZone(now: number): string {
  const offset = Math.max(-12, Math.min(12, 12 - new Date(now).getUTCHours()));
  return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

/** Every Message-ID in `user`'s INBOX whose subject carries the run's tag, with how many copies. */
async function inboxIds(address: string, tag: string): Promise<Map<string, number>> {
  const client = new ImapFlow({ host: mailBed.host, port: mailBed.imapPort, secure: false, auth: { user: address, pass }, logger: false });
  await client.connect();
  const ids = new Map<string, number>();
  try {
    const lock = await client.getMailboxLock('INBOX', { readOnly: true });
    try {
      const uids = await client.search({ subject: tag }, { uid: true });
      if (Array.isArray(uids) && uids.length) {
        for await (const m of client.fetch(uids, { envelope: true }, { uid: true })) {
          const id = m.envelope?.messageId?.trim() ?? `(none: uid ${m.uid})`;
          ids.set(id, (ids.get(id) ?? 0) + 1);
        }
      }
    } finally {
      lock.release();
    }
  } finally {
    await client.logout().catch(() => undefined);
  }
  return ids;
}

export async function runPitrDrill(o: PitrDrillOptions): Promise<PitrDrillReport> {
  const t0 = Date.now();
  const log = (line: string) => o.log?.(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}`);
  const env = { ...process.env, PG_PITR_DIR: o.pitrDir, PG_PITR_PORT: String(o.port) };
  const pg = (...args: string[]) => run(pitrScript, args, { env, timeout: 300_000 });
  const master = randomBytes(32);
  const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-pitr-drill-'));
  let output = '';
  const cadenzaEnv = (url: string) => ({
    ...process.env,
    DATABASE_URL: url,
    CADENZA_DATA_DIR: dataDir,
    CADENZA_MASTER_KEY: master.toString('base64'),
    CADENZA_PUBLIC_URL: 'https://cadenza.example.test',
    // The mail bed is on loopback; the drill asks no DNS (as vitest.config.ts sets for tests).
    CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS: 'true',
    CADENZA_LIST_HYGIENE: 'off',
    CADENZA_UNKNOWN_GRACE_MS: '3000',
    CADENZA_SENDER_RESOLVE_EVERY_MS: '500',
  });
  const cli = async (url: string, ...args: string[]) => {
    const r = await run(process.execPath, ['--import', tsxLoader, join(root, 'src', 'cli', 'main.ts'), ...args], { cwd: root, env: cadenzaEnv(url), timeout: 300_000 });
    output += `$ cadenza ${args.join(' ')}\n${r.stdout}${r.stderr}`;
    return r.stdout;
  };
  const asUser = process.getuid?.() === 0 ? ['--as-user', 'postgres'] : [];
  const children: ChildProcess[] = [];
  const startCadenza = (url: string, roles = 'scheduler,sender') => {
    const c = spawn(process.execPath, ['--import', tsxLoader, join(root, 'src', 'cli', 'main.ts'), 'start', '--roles', roles], { cwd: root, env: cadenzaEnv(url), stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout!.on('data', (b: Buffer) => void (output += b.toString()));
    c.stderr!.on('data', (b: Buffer) => void (output += b.toString()));
    children.push(c);
  };
  const stopCadenza = async () => {
    const running = children.splice(0);
    await Promise.all(
      running.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        c.kill('SIGTERM');
        await Promise.race([new Promise((r) => c.once('exit', r)), sleep(20_000)]);
        if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      }),
    );
  };
  const replying = o.replies ?? 0;
  if (replying > 0 && !o.followUp) throw new Error('replies need a follow-up step to be worth checking (followUp: true)');
  let store: Store | null = null;

  try {
    log(`cluster: fresh, WAL archived to pgBackRest (port ${o.port})`);
    await pg('destroy');
    await pg('start');
    const url = (await pg('url')).stdout.trim();
    const config = (await pg('config')).stdout.trim();
    store = await openStore({ databaseUrl: url, poolSize: 4 });
    await migrate(store);
    const db = store.db;
    const now = Date.now();
    const random = seededRandom(15);
    const deps = { clock: systemClock, random };
    const tag = `pitr${randomBytes(4).toString('hex')}`;
    const uuid = (kind: string) => `00000000-0000-7000-${kind}-${randomBytes(6).toString('hex')}`;
    const zone = noonZone(now);
    const ws = uuid('8000');
    await db.insertInto('workspace').values({ id: ws, name: 'PITR drill', time_zone: zone }).execute();
    const pacing = { dayStart: '00:45', dayEnd: '23:15', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [1 / 6, 1 / 6], hourlyCeiling: [360, 360], pickupMinutes: 0 };
    const vault = new Vault(store, localKeyWrapper(master));
    const mailboxes: string[] = [];
    for (let i = 0; i < o.mailboxes; i++) {
      const email = user(57 + i);
      const id = uuid('8001');
      const settings = { smtp: bedEndpoint('smtp'), imap: bedEndpoint('imap'), serverSavesSent: true, pacing };
      await db.insertInto('mailbox').values({ id, workspace_id: ws, email, provider: 'smtp_imap', daily_cap: 5000, settings: JSON.stringify(settings), time_zone: zone }).execute();
      await vault.put(ws, id, { kind: 'password', username: email, password: pass });
      mailboxes.push(email);
    }
    let k = 0;
    const addLeads = async (n: number, list: string) => {
      const ids: string[] = [];
      const rows = [];
      for (let j = 0; j < n; j++, k++) {
        const id = uuid('8003');
        const email = user(prospectUsers[k % prospectUsers.length]!).replace('@', `+${tag}-${list}-${k}@`);
        rows.push({ id, workspace_id: ws, email, email_norm: email, first_name: `P${k}`, time_zone: zone });
        ids.push(id);
      }
      for (let i = 0; i < rows.length; i += 500) await db.insertInto('lead').values(rows.slice(i, i + 500)).execute();
      return ids;
    };
    const outreachSteps = [{ key: 'intro', type: 'email', subject: `Hello {{first_name}} ${tag}`, body: 'Hi {{first_name}}' }];
    if (o.followUp) outreachSteps.push({ key: 'bump', type: 'email', delay: '1 minute', subject: `Following up {{first_name}} ${tag}`, body: 'Any thoughts?' } as never);
    const outreach = await applyDefinition(store, deps, ws, validateDefinition({ key: 'outreach', name: 'Outreach', window: 'any', holidays: false, jitter_minutes: 0, mailboxes, steps: outreachSteps }));
    const nurture = await applyDefinition(store, deps, ws, validateDefinition({ key: 'nurture', name: 'Nurture', window: 'any', holidays: false, jitter_minutes: 0, mailboxes, steps: [{ key: 'later', type: 'email', delay: '3 days', subject: `Later {{first_name}} ${tag}`, body: 'Hi again' }] }));
    const sendingIds = await addLeads(o.mailboxes * o.sendingLeads, 'good');
    const nurtureIds = await addLeads(o.nurtureLeads, 'nurture');
    const wrongIds = await addLeads(o.wrongLeads, 'wrong');
    await bulkEnroll(store, deps, { workspaceId: ws, sequenceId: outreach.sequenceId, leadIds: sendingIds });
    await bulkEnroll(store, deps, { workspaceId: ws, sequenceId: nurture.sequenceId, leadIds: nurtureIds });
    // The intros' send requests now, so that they are due before anything the bad action adds.
    await new EnrollmentService({ store, ...deps }).fireDue(10_000);
    const goodEnrollments = new Set((await db.selectFrom('enrollment').select('id').where('workspace_id', '=', ws).execute()).map((r) => r.id));
    const outreachStepCount = o.followUp ? 2 : 1;
    const followStepId = o.followUp
      ? (await db.selectFrom('step').select('id').where('sequence_id', '=', outreach.sequenceId).where('key', '=', 'bump').executeTakeFirstOrThrow()).id
      : null;

    log('cadenza backup (full)');
    const b0 = Date.now();
    await cli(url, 'backup', '--config', config, ...asUser);
    const backupMs = Date.now() - b0;

    const sentRequests = () =>
      db
        .selectFrom('send_request as r')
        .select(['r.id', 'r.enrollment_id', 'r.step_id', 'r.state', 'r.message_id', 'r.updated_at'])
        .where('r.workspace_id', '=', ws)
        .where('r.state', 'in', ['sent', 'possibly_sent'])
        .execute();
    const waitSent = async (n: number, what: string, withinMs: number) => {
      const until = Date.now() + withinMs;
      for (;;) {
        const rows = await sentRequests();
        if (rows.length >= n) return rows;
        if (Date.now() > until) throw new Error(`${what}: ${rows.length} of ${n} sends within ${withinMs / 1000} s\n${output}`);
        await sleep(100);
      }
    };

    if (replying > 0) {
      // The sync first, alone, until every mailbox has a cursor: the restore point then falls after
      // them, and the restore brings back cursors from before the replies.
      log('cadenza start --roles sync, until every mailbox has a cursor');
      startCadenza(url, 'sync');
      const cursors = await poll(async () => {
        const n = (await db.selectFrom('mailbox_sync').select('mailbox_id').where('cursor', 'is not', null).execute()).length;
        return n >= o.mailboxes ? n : 0;
      }, 120_000);
      if (!cursors) throw new Error(`the sync stored no cursor for every mailbox within 120 s\n${output}`);
    }
    log('cadenza start --roles scheduler,sender');
    startCadenza(url);
    await waitSent(o.sentBeforeRestorePoint, 'before the restore point', 120_000);
    // The restore point: a whole second after the last commit seen, so that the instant falls
    // between commits (a time target stops at the first commit after it).
    await sleep(1_100);
    const restorePoint = Date.now();
    await sleep(1_100);
    const sentAtPoint = await sentRequests();
    log(`restore point ${new Date(restorePoint).toISOString()} (${sentAtPoint.length} steps sent before it)`);

    // Prospects answer intros sent after the restore point, and the (lost) database stops them.
    const replied: Array<{ enrollmentId: string; mailbox: string; reply: string }> = [];
    if (replying > 0) {
      const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
      try {
        const intros = await poll(async () => {
          const rows = await db
            .selectFrom('send_request as r')
            .innerJoin('mailbox as m', 'm.id', 'r.mailbox_id')
            .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
            .innerJoin('lead as l', 'l.id', 'e.lead_id')
            .select(['r.enrollment_id', 'r.message_id', 'r.updated_at', 'm.email as mailbox', 'l.email as lead'])
            .where('r.workspace_id', '=', ws)
            .where('r.state', '=', 'sent')
            .where('r.step_id', '!=', followStepId!)
            .execute();
          const after = rows.filter((r) => goodEnrollments.has(r.enrollment_id) && r.updated_at.getTime() > restorePoint);
          return after.length >= replying ? after.slice(0, replying) : null;
        }, 120_000);
        if (!intros) throw new Error(`fewer than ${replying} intros sent after the restore point within 120 s\n${output}`);
        for (const i of intros) {
          const reply = `<reply-${i.enrollment_id}-${tag}@inbox.test>`;
          const raw = replyMail({ from: i.lead, to: i.mailbox, inReplyTo: i.message_id!, subject: `Re: Hello ${tag}`, body: 'Thanks, not now.\n\n> Hi', messageId: reply });
          await smtp.sendMail({ envelope: { from: i.lead, to: [i.mailbox] }, raw });
          replied.push({ enrollmentId: i.enrollment_id, mailbox: i.mailbox, reply });
        }
      } finally {
        smtp.close();
      }
      log(`${replied.length} prospects replied after the restore point`);
    }
    const stoppedCount = async (database: Store['db']) =>
      replied.length === 0
        ? 0
        : (await database.selectFrom('enrollment').select('id').where('id', 'in', replied.map((r) => r.enrollmentId)).where('state', '=', 'replied').execute()).length;
    const stoppedBeforeRestore = replied.length ? await poll(async () => ((await stoppedCount(db)) >= replied.length ? replied.length : 0), 60_000) || (await stoppedCount(db)) : 0;

    log(`bad bulk action: ${nurtureIds.length} nurture enrollments moved to outreach at step one, wrong list of ${wrongIds.length} enrolled`);
    const service = new EnrollmentService({ store, ...deps });
    const nurtureEnrollments = (await db.selectFrom('enrollment').select('id').where('sequence_id', '=', nurture.sequenceId).execute()).map((r) => r.id);
    for (let i = 0; i < nurtureEnrollments.length; i += 1000) {
      await moveEnrollments({ store, ...deps, service }, { workspaceId: ws, sequenceId: outreach.sequenceId, enrollmentIds: nurtureEnrollments.slice(i, i + 1000) });
    }
    await bulkEnroll(store, deps, { workspaceId: ws, sequenceId: outreach.sequenceId, leadIds: wrongIds });
    log('bad bulk action done; Cadenza sends on');
    await waitSent(sentAtPoint.length + o.sentAfterBadAction, 'after the bad action', 180_000);
    await stopCadenza();
    const lost = await sentRequests();
    const goodAfter = lost.filter((r) => goodEnrollments.has(r.enrollment_id) && r.updated_at.getTime() > restorePoint);
    const badActionSends = lost.filter((r) => !goodEnrollments.has(r.enrollment_id)).length;
    log(`stopped Cadenza: ${goodAfter.length} good steps and ${badActionSends} of the bad action's sent after the restore point`);
    await store.close();
    store = null;
    if (replied.length) log(`the lost database had ${stoppedBeforeRestore} of ${replied.length} replying enrollments stopped`);

    const stopAt = Date.now();
    await pg('stop');
    const r0 = Date.now();
    const when = new Date(restorePoint).toISOString();
    await cli(url, 'restore', '--to', when, '--config', config, ...asUser);
    const restoreMs = Date.now() - r0;
    await pg('start');
    const restoredAt = Date.now();
    log(`restored to ${when} in ${restoredAt - stopAt} ms (pgbackrest restore ${restoreMs} ms)`);

    const c0 = Date.now();
    const rec = o.skipReconcile
      ? { recorded: 0, possiblySent: 0, alreadyRecorded: 0, unmatched: 0, conflicts: [] }
      : (JSON.parse(await cli(url, '--json', 'reconcile-sent', '--since', when)) as { recorded: number; possiblySent: number; alreadyRecorded: number; unmatched: number; conflicts: string[] });
    const reconcileMs = Date.now() - c0;
    log(`reconcile-sent: ${rec.recorded} steps recorded sent, ${rec.unmatched} copies of no step in the restored data (${reconcileMs} ms)`);

    store = await openStore({ databaseUrl: url, poolSize: 2 });
    const rdb = store.db;
    const rows: Record<string, number> = {};
    for (const t of ['lead', 'enrollment', 'send_request', 'message'] as const) {
      rows[t] = Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(t)}`.execute(rdb)).rows[0]!.n);
    }
    const bySeq = await rdb.selectFrom('enrollment').select(['sequence_id', 'state', 'waiting_for', 'lead_id']).execute();
    const wrongSet = new Set(wrongIds);
    const restored = {
      rows,
      nurtureWaiting: bySeq.filter((e) => e.sequence_id === nurture.sequenceId && e.state === 'active' && e.waiting_for === 'timer').length,
      outreachEnrollments: bySeq.filter((e) => e.sequence_id === outreach.sequenceId).length,
      wrongListEnrollments: bySeq.filter((e) => wrongSet.has(e.lead_id)).length,
      movedEnrollments: bySeq.filter((e) => (e.state as string) === 'moved').length,
    };
    const after = await rdb.selectFrom('send_request').select(['enrollment_id', 'step_id', 'state', 'message_id']).execute();
    const missed = goodAfter
      .filter((g) => !after.some((a) => a.enrollment_id === g.enrollment_id && a.step_id === g.step_id && (a.state === 'sent' || a.state === 'possibly_sent') && a.message_id === g.message_id))
      .map((g) => `${g.enrollment_id}/${g.step_id} ${g.message_id}`);

    const restoredCursors = (await rdb.selectFrom('mailbox_sync').select('mailbox_id').where('cursor', 'is not', null).execute()).length;

    log('cadenza start again, until every outreach step is settled');
    const s0 = Date.now();
    startCadenza(url, replying > 0 ? 'scheduler,sender,sync' : 'scheduler,sender');
    // The follow-ups of the prospects who replied are never sent.
    const target = o.mailboxes * o.sendingLeads * outreachStepCount - replied.length;
    let restopMs: number | null = null;
    const settleBy = Date.now() + 60_000 + (o.followUp ? 90_000 : 0) + target * 3_000;
    let settled = await rdb.selectFrom('send_request').select(['state']).where('workspace_id', '=', ws).execute();
    while (Date.now() < settleBy) {
      settled = await rdb.selectFrom('send_request').select(['state']).where('workspace_id', '=', ws).execute();
      if (restopMs === null && replied.length && (await stoppedCount(rdb)) >= replied.length) restopMs = Date.now() - s0;
      if (settled.filter((r) => r.state === 'sent' || r.state === 'possibly_sent').length >= target && (restopMs !== null || !replied.length)) break;
      await sleep(250);
    }
    const settleMs = Date.now() - s0;
    // A few seconds more: a step the reconcile missed would be claimed again now.
    await sleep(3_000);
    await stopCadenza();
    const repliedIds = new Set(replied.map((r) => r.enrollmentId));
    const requests = await rdb.selectFrom('send_request').select(['enrollment_id', 'step_id', 'state', 'last_error', 'message_id']).execute();
    const unsettled = requests
      // A replying enrollment's follow-up may have been queued before the reply was read again: cancelled is its right end.
      .filter((r) => r.state !== 'sent' && r.state !== 'possibly_sent' && !(repliedIds.has(r.enrollment_id) && r.step_id === followStepId && r.state === 'cancelled'))
      .map((r) => `${r.enrollment_id}/${r.step_id} ${r.state} ${r.last_error ?? ''}`);
    const stoppedAfterRestore = await stoppedCount(rdb);
    const followUpsSent = requests
      .filter((r) => repliedIds.has(r.enrollment_id) && r.step_id === followStepId && (r.state === 'sent' || r.state === 'possibly_sent' || r.state === 'unknown'))
      .map((r) => `${r.enrollment_id} ${r.state} ${r.message_id ?? ''}`);
    await sleep(1_500); // late deliveries land before counting

    const duplicates: string[] = [];
    const followUpIds = new Map(replied.map((r) => [stepMessageId(r.mailbox, r.enrollmentId, followStepId!), r.enrollmentId]));
    for (const n of prospectUsers) {
      for (const [id, copies] of await inboxIds(user(n), tag)) {
        if (copies > 1) duplicates.push(`${user(n)} ${id} x${copies}`);
        // Whatever the database says, a follow-up in the INBOX of a prospect who replied is the defect.
        if (followUpIds.has(id) && !followUpsSent.some((f) => f.startsWith(followUpIds.get(id)!))) followUpsSent.push(`${followUpIds.get(id)} in the INBOX ${id}`);
      }
    }
    return {
      restorePoint: when,
      backupMs,
      restored,
      goodSentAfterRestorePoint: goodAfter.length,
      badActionSends,
      reconciled: { recorded: rec.recorded, possiblySent: rec.possiblySent, alreadyRecorded: rec.alreadyRecorded, unmatched: rec.unmatched, conflicts: rec.conflicts.length },
      replies: { sent: replied.length, stoppedBeforeRestore, restoredCursors, stoppedAfterRestore, restopMs, followUpsSent },
      missed,
      duplicates,
      unsettled,
      outreachSteps: target,
      timings: { stopToRestoredMs: restoredAt - stopAt, restoreMs, reconcileMs, recoveryMs: restoredAt - stopAt + reconcileMs, settleMs },
      output,
    };
  } finally {
    await stopCadenza();
    await store?.close().catch(() => undefined);
    await pg('destroy').catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// `npm run drill:pitr`: the full drill, its figures printed, then one JSON line.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const skip = await pitrTools();
  if (skip) {
    console.error(`drill skipped: ${skip}`);
    process.exit(2);
  }
  const o: PitrDrillOptions = {
    mailboxes: Number(process.env.DRILL_MAILBOXES ?? 4),
    sendingLeads: Number(process.env.DRILL_LEADS ?? 4),
    followUp: true,
    nurtureLeads: Number(process.env.DRILL_NURTURE ?? 3000),
    wrongLeads: Number(process.env.DRILL_WRONG ?? 2000),
    sentBeforeRestorePoint: Number(process.env.DRILL_BEFORE ?? 6),
    sentAfterBadAction: Number(process.env.DRILL_AFTER ?? 8),
    pitrDir: process.env.PG_PITR_DIR ?? join(tmpdir(), 'cadenza-pitr-drill'),
    port: Number(process.env.PG_PITR_PORT ?? 5561),
    replies: Number(process.env.DRILL_REPLIES ?? 2),
    skipReconcile: process.env.DRILL_SKIP_RECONCILE === '1',
    log: (l) => console.log(l),
  };
  const r = await runPitrDrill(o);
  const { output, ...figures } = r;
  const ok =
    r.duplicates.length === 0 &&
    r.missed.length === 0 &&
    r.unsettled.length === 0 &&
    r.restored.wrongListEnrollments === 0 &&
    r.restored.nurtureWaiting === o.nurtureLeads &&
    r.replies.followUpsSent.length === 0 &&
    r.replies.stoppedAfterRestore === r.replies.sent;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(`
data restored: ${r.restored.rows.enrollment} enrollments (${r.restored.nurtureWaiting} nurture enrollments waiting again, ${r.restored.wrongListEnrollments} of the wrong list, ${r.restored.movedEnrollments} moved), ${r.restored.rows.lead} leads, ${r.restored.rows.send_request} send requests, ${r.restored.rows.message} messages
steps sent after the restore point: ${r.goodSentAfterRestorePoint} good (reconciled: ${r.reconciled.recorded}, missed: ${r.missed.length}), ${r.badActionSends} by the bad action (${r.reconciled.unmatched} copies of no restored step)
replies after the restore point: ${r.replies.sent} (stopped before the restore: ${r.replies.stoppedBeforeRestore}; cursors restored: ${r.replies.restoredCursors}; stopped again after it: ${r.replies.stoppedAfterRestore}${r.replies.restopMs === null ? '' : `, ${s(r.replies.restopMs)} after Cadenza started`}); follow-ups sent to them: ${r.replies.followUpsSent.length}
duplicates (a Message-ID twice in a prospect INBOX): ${r.duplicates.length}; outreach steps unsettled: ${r.unsettled.length} of ${r.outreachSteps}
time: backup ${s(r.backupMs)}; stop → restored and open ${s(r.timings.stopToRestoredMs)} (pgbackrest restore ${s(r.timings.restoreMs)}); reconcile ${s(r.timings.reconcileMs)}; recovery in all ${s(r.timings.recoveryMs)}`);
  if (!ok) console.log(output);
  console.log(JSON.stringify({ ok, ...figures }));
  process.exit(ok ? 0 : 1);
}
