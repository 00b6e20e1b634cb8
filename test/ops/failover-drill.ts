import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { seededRandom } from '../../src/common/random.ts';
import { localKeyWrapper, Vault } from '../../src/mailbox/vault.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { EnrollmentService } from '../../src/sequence/enrollment-service.ts';
import { SimClock } from '../../src/sim/sim-clock.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openStore, type Store } from '../../src/store/store.ts';
import { bedEndpoint, countByMessageId } from '../mail/mailbed.ts';

/**
 * The failover drill with manual promotion (docs/operations.md, "Replication and failover"):
 * a primary with a synchronous standby (pg-pair.sh), `cadenza start --roles sender` on the
 * multi-host URL, sends under way on the mail bed, then SIGKILL of the primary, `pg_ctl promote`
 * of the standby `promoteAfterMs` later, and Cadenza carries on against it.
 *
 * Verdict, from the prospects' INBOXes and the promoted database:
 *   - no step sent twice: every Message-ID is in its prospect's INBOX at most once;
 *   - no sent step forgotten: every request recorded sent on the primary before the kill is sent
 *     on the promoted standby (synchronous commit), and every Message-ID delivered is recorded
 *     sent (or possibly_sent, when Cadenza could not tell);
 *   - every request ends settled (sent, possibly_sent).
 * Figures: how long after the kill Cadenza's first write on the new primary committed (resume),
 * and how long until every send was settled.
 *
 * Mailboxes sync41..48 of the bed (the server files Sent copies), prospects are plus-addresses of
 * sync49..52, tagged per run; pacing allows one send a minute per mailbox, so each mailbox's
 * first send is under way at the kill and its later ones come after.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsxLoader = join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
const pair = join(root, 'test', 'ops', 'pg-pair.sh');
const run = promisify(execFile);
const pass = 'pass';
const user = (n: number) => `sync${n}@inbox.test`;
const prospectUsers = [49, 50, 51, 52];

export interface DrillOptions {
  /** 1..8 mailboxes (sync41..48). */
  mailboxes: number;
  leadsPerMailbox: number;
  /** Between the kill and pg_ctl promote: how long detection takes (Patroni: its TTL). */
  promoteAfterMs: number;
  pairDir: string;
  log?: (line: string) => void;
}

export interface DrillReport {
  sends: number;
  sentBeforeKill: number;
  killToPromotedMs: number;
  /** Kill → Cadenza's first commit on the promoted node. */
  resumeMs: number | null;
  /** Kill → every request settled. */
  settledMs: number;
  duplicates: string[];
  forgotten: string[];
  unsettled: string[];
  output: string;
}

export async function pairTools(): Promise<string | null> {
  try {
    await run('bash', ['-c', 'command -v pg_basebackup && (command -v pg_ctl || test -x "$(pg_config --bindir)/pg_ctl")']);
    return null;
  } catch {
    return 'PostgreSQL server binaries (pg_ctl, pg_basebackup) are not installed';
  }
}

function noonZone(now: number): string {
  const offset = Math.max(-12, Math.min(12, 12 - new Date(now).getUTCHours()));
  return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runFailoverDrill(o: DrillOptions): Promise<DrillReport> {
  const log = o.log ?? (() => undefined);
  const env = { ...process.env, PG_PAIR_DIR: o.pairDir };
  const pg = (...args: string[]) => run(pair, args, { env });
  log('pair: fresh primary + synchronous standby');
  await pg('destroy');
  await pg('start');
  const url = (await pg('url')).stdout.trim();
  const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-drill-'));
  let child: ChildProcess | null = null;
  let store: Store | null = null;
  let output = '';
  try {
    store = await openStore({ databaseUrl: url, poolSize: 4, failoverWaitMs: 60_000 });
    await migrate(store);
    const db = store.db;
    const now = Date.now();
    const random = seededRandom(46);
    const clock = new SimClock(now);
    const master = randomBytes(32);
    const tag = randomBytes(4).toString('hex');
    const uuid = (kind: string) => `00000000-0000-7000-${kind}-${randomBytes(6).toString('hex')}`;
    const zone = noonZone(now);
    const ws = uuid('8000');
    await db.insertInto('workspace').values({ id: ws, name: 'Drill', time_zone: zone }).execute();
    const pacing = { dayStart: '00:45', dayEnd: '23:15', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [1, 1], hourlyCeiling: [60, 60], pickupMinutes: 0 };
    const vault = new Vault(store, localKeyWrapper(master));
    let k = 0;
    for (let i = 0; i < o.mailboxes; i++) {
      const n = 41 + i;
      const id = uuid('8001');
      const settings = { smtp: bedEndpoint('smtp'), imap: bedEndpoint('imap'), serverSavesSent: true, pacing };
      await db.insertInto('mailbox').values({ id, workspace_id: ws, email: user(n), provider: 'smtp_imap', daily_cap: 1000, settings: JSON.stringify(settings), time_zone: zone }).execute();
      await vault.put(ws, id, { kind: 'password', username: user(n), password: pass });
      const leads: string[] = [];
      for (let j = 0; j < o.leadsPerMailbox; j++, k++) {
        const lid = uuid('8003');
        const email = user(prospectUsers[k % 4]!).replace('@', `+${tag}-${k}@`);
        await db.insertInto('lead').values({ id: lid, workspace_id: ws, email, email_norm: email, first_name: `P${k}`, time_zone: zone }).execute();
        leads.push(lid);
      }
      const def = validateDefinition({ key: `s${n}`, name: `s${n}`, window: 'any', holidays: false, jitter_minutes: 0, mailboxes: [user(n)], steps: [{ key: 'intro', type: 'email', subject: `Drill {{first_name}} ${tag}`, body: 'Hi {{first_name}}' }] });
      const seq = await applyDefinition(store, { clock, random }, ws, def);
      await bulkEnroll(store, { clock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leads });
    }
    await new EnrollmentService({ store, clock, random }).fireDue(1000);
    const requests = () =>
      db
        .selectFrom('send_request as r')
        .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
        .innerJoin('lead as l', 'l.id', 'e.lead_id')
        .select(['r.id', 'r.state', 'r.message_id', 'r.updated_at', 'r.last_error', 'l.email'])
        .orderBy('r.id')
        .execute();
    const sends = o.mailboxes * o.leadsPerMailbox;

    log(`cadenza: start --roles sender on ${url}`);
    child = spawn(process.execPath, ['--import', tsxLoader, join(root, 'src', 'cli', 'main.ts'), 'start', '--roles', 'sender'], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: url,
        CADENZA_DATA_DIR: dataDir,
        CADENZA_MASTER_KEY: master.toString('base64'),
        CADENZA_PUBLIC_URL: 'https://cadenza.example.test',
        CADENZA_ROLES: 'sender',
        // The mail bed is on loopback; the drill asks no DNS (as vitest.config.ts sets for tests).
        CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS: 'true',
        CADENZA_LIST_HYGIENE: 'off',
        CADENZA_UNKNOWN_GRACE_MS: '3000',
        CADENZA_SENDER_RESOLVE_EVERY_MS: '500',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (b: Buffer) => void (output += b.toString()));
    child.stderr!.on('data', (b: Buffer) => void (output += b.toString()));

    // The kill comes while the first round is under way: some sends recorded, the rest not yet.
    const firstRound = Math.max(1, Math.floor(o.mailboxes / 2));
    const until = Date.now() + 90_000;
    let before = await requests();
    while (before.filter((r) => r.state === 'sent').length < firstRound) {
      if (Date.now() > until) throw new Error(`no sends within 90 s:\n${output}`);
      await sleep(20);
      before = await requests();
    }
    const sentBefore = before.filter((r) => r.state === 'sent').map((r) => r.id);
    const killedAt = Date.now();
    await pg('kill', 'node_a');
    log(`killed the primary with ${sentBefore.length} of ${sends} sent (${before.filter((r) => r.state === 'in_flight').length} in flight)`);
    await sleep(o.promoteAfterMs);
    await pg('promote', 'node_b');
    const promotedAt = Date.now();
    log(`promoted node_b ${promotedAt - killedAt} ms after the kill`);

    // Cadenza's first commit on the new primary: a request settled, a lease renewed or its membership
    // heartbeat (every 3 s). The short drill may have sent everything before the kill, so the watch
    // goes on until that first commit is seen, not only until every request is settled.
    let resumeMs: number | null = null;
    const latestWrite = async (table: 'lease' | 'member', column: 'renewed_at' | 'heartbeat_at') => {
      const row = await db
        .selectFrom(table)
        .select((eb) => eb.fn.max(column as never).as('at'))
        .executeTakeFirst()
        .catch(() => undefined);
      return row?.at ? new Date(row.at as unknown as string).getTime() : 0;
    };
    const final = new Set(['sent', 'possibly_sent', 'failed', 'cancelled']);
    const settleBy = Date.now() + 60_000 + o.leadsPerMailbox * 75_000;
    let after = await requests();
    while (Date.now() < settleBy) {
      after = await requests();
      if (resumeMs === null) {
        const latest = Math.max(...after.map((r) => r.updated_at.getTime()));
        const first = Math.max(latest, await latestWrite('lease', 'renewed_at'), await latestWrite('member', 'heartbeat_at'));
        if (first > promotedAt) resumeMs = first - killedAt;
      }
      if (resumeMs !== null && after.every((r) => final.has(r.state))) break;
      await sleep(100);
    }
    const settledMs = Date.now() - killedAt;
    await sleep(1_500); // late deliveries land before counting

    const duplicates: string[] = [];
    const forgotten: string[] = [];
    const unsettled = after.filter((r) => !final.has(r.state)).map((r) => `${r.email} ${r.state} ${r.last_error ?? ''}`);
    for (const r of after) {
      if (!r.message_id) continue;
      const copies = await countByMessageId(r.email.replace(/\+[^@]*/, ''), pass, r.message_id);
      if (copies > 1) duplicates.push(`${r.email} ${r.message_id} x${copies}`);
      if (copies >= 1 && r.state !== 'sent' && r.state !== 'possibly_sent' && r.state !== 'unknown') forgotten.push(`${r.email} delivered but ${r.state}`);
    }
    for (const id of sentBefore) {
      const r = after.find((x) => x.id === id);
      if (r?.state !== 'sent') forgotten.push(`${id} was sent on the primary, ${r?.state ?? 'missing'} on the promoted standby`);
    }
    return { sends, sentBeforeKill: sentBefore.length, killToPromotedMs: promotedAt - killedAt, resumeMs, settledMs, duplicates, forgotten, unsettled, output };
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([new Promise((r) => child!.once('exit', r)), sleep(10_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await store?.close().catch(() => undefined);
    await pg('destroy').catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// `npm run drill:failover`: the full drill, its figures printed.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const skip = await pairTools();
  if (skip) {
    console.error(`drill skipped: ${skip}`);
    process.exit(2);
  }
  const r = await runFailoverDrill({
    mailboxes: Number(process.env.DRILL_MAILBOXES ?? 8),
    leadsPerMailbox: Number(process.env.DRILL_LEADS ?? 2),
    promoteAfterMs: Number(process.env.DRILL_PROMOTE_AFTER_MS ?? 1_000),
    pairDir: process.env.PG_PAIR_DIR ?? join(tmpdir(), 'cadenza-drill-pair'),
    log: (l) => console.log(l),
  });
  const { output, ...figures } = r;
  console.log(JSON.stringify(figures, null, 2));
  const ok = r.duplicates.length === 0 && r.forgotten.length === 0 && r.unsettled.length === 0;
  if (!ok) console.log(output);
  process.exit(ok ? 0 : 1);
}
