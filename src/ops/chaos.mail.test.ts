import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { describeMailBed } from '../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, countByMessageId, mailBed, readInbox } from '../../test/mail/mailbed.ts';

/**
 * The chaos drill of issue 15: `cadenza start --supervise --roles scheduler,sender,sync` as a real
 * process on PostgreSQL (one child per role), 3 mailboxes of the bed each sending to its prospects
 * at a 10 s gap, prospects replying to what they receive; meanwhile a seeded chaos monkey kills a
 * random role child (SIGKILL or SIGTERM, seeded) again and again, each time once the previous one's
 * leases were taken over. At the end, from the bed and the database:
 *
 * - nothing repeated: a sent request's Message-ID is in its prospect's INBOX exactly once, a
 *   possibly_sent one's at most once (the user decides; it is never retried by itself);
 * - nothing lost: every request is settled sent or possibly_sent, every reply is stored;
 * - no burst: a mailbox's claims are never closer than its 3 s gap, across restarts (the pacing
 *   budget is rebuilt from the claims in the database, sending/dispatch/reserve.ts);
 * - leases taken over: the time from a kill to every mailbox's lease of that role held by the
 *   restarted child, printed (restart back-off + a process start + the first lease pass).
 *
 * `npm test` runs the short drill (CHAOS_KILLS=4, 4 prospects a mailbox); `npm run chaos:long` a
 * longer one (CHAOS_KILLS=16, 12 a mailbox). CHAOS_SEED picks the kills. Figures on stdout.
 *
 * Mail-bed users: load1991..1993@load.test (the mailboxes; the bed files no Sent copy for them, so
 * Cadenza appends its own, and a send killed between the server's 250 and that copy cannot be told
 * from one killed before: it is recorded possibly_sent and never sent again), load1994..1996@load.test
 * (prospects, plus-addressed per run).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(root, 'bin', 'cadenza.js');
const KILLS = Number(process.env.CHAOS_KILLS ?? 4);
const PER_MAILBOX = Number(process.env.CHAOS_LEADS ?? 4);
const SEED = Number(process.env.CHAOS_SEED ?? 15);
// The least gap pacing allows (10 s: mailbox/pacing/settings.ts).
const GAP_MS = 10_000;
const pass = 'pass';
const user = (n: number) => `load${n}@load.test`;

describeMailBed('chaos: role processes killed and drained at random under load', () => {
  let store: TestStore;
  let sup: ChildProcess | undefined;
  const dirs: string[] = [];
  beforeAll(async () => {
    // The program as installed runs: dist/ built from these sources (bin/cadenza.js uses it when it
    // matches src/), so a restart costs a start of the build, not of tsx compiling src/ on the fly.
    execFileSync('npm', ['run', '--silent', 'build:src'], { cwd: root, stdio: 'inherit' });
    store = await freshStore('postgres');
  }, 120_000);
  afterAll(async () => {
    if (sup && sup.exitCode === null) {
      // The children first (the supervisor would restart them): its process group is its own.
      try {
        process.kill(-sup.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await store.destroy();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('nothing lost, nothing repeated, no burst after a restart, leases taken over', async () => {
    const random = seededRandom(SEED);
    const chaos = seededRandom(SEED * 7 + 1);
    const answers = seededRandom(SEED * 13 + 5);
    const master = randomBytes(32);
    const tag = randomBytes(4).toString('hex');
    const uuid = (kind: string) => `00000000-0000-7000-${kind}-${randomBytes(6).toString('hex')}`;
    const ws = uuid('8000');
    await store.db.insertInto('workspace').values({ id: ws, name: 'Chaos', time_zone: 'UTC' }).execute();
    // Any hour, any day, a 10-12 s gap that the day's spread does not stretch.
    const pacing = { dayStart: '00:00', dayEnd: '23:59', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [GAP_MS / 60_000, 0.2], spreadDay: false, hourlyCeiling: [1000, 1000], pickupMinutes: 0 };
    const vault = new Vault(store, localKeyWrapper(master));
    const mailboxes = new Map<string, string>();
    for (const [k, n] of [1991, 1992, 1993].entries()) {
      const id = uuid('8001');
      mailboxes.set(id, user(n));
      // The bed files no Sent copy of its own for load users: Cadenza appends it (serverSavesSent false).
      const settings = { smtp: bedEndpoint('smtp', 'none'), imap: bedEndpoint('imap'), serverSavesSent: false, pacing };
      await store.db.insertInto('mailbox').values({ id, workspace_id: ws, email: user(n), provider: 'smtp_imap', daily_cap: 200, settings: JSON.stringify(settings), time_zone: 'UTC' }).execute();
      await vault.put(ws, id, { kind: 'password', username: user(n), password: pass });
      const leads: string[] = [];
      for (let i = 0; i < PER_MAILBOX; i++) {
        const lid = uuid('8003');
        const email = user(1994 + ((k + i) % 3)).replace('@', `+c${n}x${i}${tag}@`);
        await store.db.insertInto('lead').values({ id: lid, workspace_id: ws, email, email_norm: email, first_name: `P${i}`, time_zone: 'UTC' }).execute();
        leads.push(lid);
      }
      const def = validateDefinition({ key: `c${n}`, name: `c${n}`, window: 'any', holidays: false, jitter_minutes: 0, mailboxes: [user(n)], steps: [{ key: 'intro', type: 'email', subject: `Hello {{first_name}} ${tag}`, body: 'Hi {{first_name}}' }] });
      const seq = await applyDefinition(store, { clock: systemClock, random }, ws, def);
      await bulkEnroll(store, { clock: systemClock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leads });
    }
    const total = mailboxes.size * PER_MAILBOX;

    // The supervised program, in a process group of its own (so the test can end all of it).
    const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-chaos-'));
    dirs.push(dataDir);
    let out = '';
    sup = spawn(process.execPath, [cli, 'start', '--supervise', '--roles', 'scheduler,sender,sync'], {
      cwd: root,
      detached: true,
      env: {
        ...process.env,
        DATABASE_URL: store.url!,
        CADENZA_DATA_DIR: dataDir,
        CADENZA_MASTER_KEY: master.toString('base64'),
        CADENZA_PUBLIC_URL: 'https://cadenza.example.test',
        CADENZA_DOMAIN_CHECKS: 'off',
        // A send killed mid-way is settled through the Sent folder after this grace, looked for every
        // 2 s (production: 15 min, every minute).
        CADENZA_UNKNOWN_GRACE_MS: '3000',
        CADENZA_SENDER_RESOLVE_EVERY_MS: '2000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    sup.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    sup.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    const supExit = new Promise<number | null>((r) => sup!.once('exit', (code) => r(code)));
    /** The pid of each role's child now, from the supervisor's log. */
    const rolePids = () => {
      const pids = new Map<string, number>();
      for (const m of out.matchAll(/supervisor: role (\w+) started \(pid (\d+)\)/g)) pids.set(m[1]!, Number(m[2]));
      return pids;
    };
    const waitFor = async (what: string, cond: () => Promise<boolean> | boolean, ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (await cond()) return Date.now();
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${what}: not within ${ms} ms\n${out.slice(-8000)}`);
    };
    /** Every mailbox's lease of `kind` held now by `pid`. */
    const heldBy = async (kind: 'mailbox' | 'sync', pid: number) => {
      const rows = await store.db.selectFrom('lease').select(['resource', 'owner']).where('resource', 'like', `${kind}:%`).where('expires_at', '>', new Date()).execute();
      return [...mailboxes.keys()].every((id) => rows.some((r) => r.resource === `${kind}:${id}` && r.owner.split(':')[1] === String(pid)));
    };
    await waitFor('every role holds its leases', async () => {
      const p = rolePids();
      return p.size === 3 && (await heldBy('mailbox', p.get('sender')!)) && (await heldBy('sync', p.get('sync')!));
    }, 180_000);

    // Prospects answer what they received, while the monkey works: each reply must be stored.
    const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
    const replies = new Map<string, string>(); // reply Message-ID -> the mailbox it went to
    const answered = new Set<string>();
    let replying = true;
    const replier = (async () => {
      while (replying) {
        const sent = await store.db.selectFrom('message').select(['message_id', 'from_addr', 'to_addrs', 'mailbox_id']).where('direction', '=', 'outbound').execute();
        for (const m of sent) {
          if (answered.has(m.message_id)) continue;
          answered.add(m.message_id);
          // Every other one, seeded: a reply and a silence both happen under load.
          if (answers.next() < 0.5) continue;
          const id = `<reply-${randomBytes(6).toString('hex')}@load.test>`;
          await smtp.sendMail({ from: m.to_addrs[0]!, to: mailboxes.get(m.mailbox_id!)!, subject: `Re: hello ${tag}`, text: 'Sounds good, tell me more.', messageId: id, inReplyTo: m.message_id, references: [m.message_id] });
          replies.set(id, m.mailbox_id!);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();

    // The monkey: a random role, a random signal, then wait until the restarted child holds what
    // the killed one held, then a random pause.
    const takeovers: Array<{ role: string; signal: string; ms: number }> = [];
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 1_000 + Math.floor(chaos.next() * 3_000)));
      const roles = ['scheduler', 'sender', 'sync'] as const;
      const role = roles[Math.floor(chaos.next() * roles.length)]!;
      const signal = chaos.next() < 0.5 ? 'SIGKILL' : 'SIGTERM';
      const victim = rolePids().get(role)!;
      const at = Date.now();
      process.kill(victim, signal);
      const back = await waitFor(`${role} back after ${signal}`, async () => {
        const now = rolePids().get(role);
        if (now === undefined || now === victim) return false;
        if (role === 'sender') return heldBy('mailbox', now);
        if (role === 'sync') return heldBy('sync', now);
        return true;
      }, 180_000);
      // The scheduler holds no lease: its figure is the restart alone (back-off, then a new pid).
      takeovers.push({ role, signal, ms: back - at });
    }
    const chaosEnded = Date.now();

    // Everything settles: every request sent, every reply stored.
    await waitFor('every request settles', async () => {
      const rows = await store.db.selectFrom('send_request').select('state').execute();
      return rows.length === total && rows.every((r) => r.state === 'sent' || r.state === 'possibly_sent');
    }, 300_000);
    replying = false;
    await replier;
    const stored = async () => {
      const ids = [...replies.keys()];
      if (!ids.length) return 0;
      return (await store.db.selectFrom('message').select('message_id').where('direction', '=', 'inbound').where('message_id', 'in', ids.flatMap((i) => [i, i.slice(1, -1)])).execute()).length;
    };
    await waitFor('every reply is stored', async () => (await stored()) === replies.size, 120_000);
    const settledMs = Date.now() - chaosEnded;

    // Nothing repeated: each request's Message-ID is in its prospect's INBOX exactly once.
    const sends = await store.db.selectFrom('send_request as r').innerJoin('enrollment as e', 'e.id', 'r.enrollment_id').innerJoin('lead as l', 'l.id', 'e.lead_id').select(['r.message_id', 'r.mailbox_id', 'r.claimed_at', 'r.state', 'l.email']).execute();
    expect(sends).toHaveLength(total);
    const supervisorLog = () => out.split('\n').filter((l) => l.includes('supervisor')).join('\n');
    for (const s of sends) {
      const to = s.email.replace(/\+[^@]*/, '');
      if (s.state === 'sent') await readInbox(to, pass, s.message_id!);
      else await new Promise((r) => setTimeout(r, 2_000));
      const copies = await countByMessageId(to, pass, s.message_id!);
      expect(copies, `${s.state} ${s.message_id} to ${s.email}\n${supervisorLog()}`).toBe(s.state === 'sent' ? 1 : Math.min(copies, 1));
    }
    const possibly = sends.filter((s) => s.state === 'possibly_sent').length;

    // No burst: per mailbox, claims at least the gap apart, kills and restarts included.
    let closest = Infinity;
    for (const id of mailboxes.keys()) {
      const times = sends.filter((s) => s.mailbox_id === id).map((s) => s.claimed_at!.getTime()).sort((a, b) => a - b);
      for (let i = 1; i < times.length; i++) closest = Math.min(closest, times[i]! - times[i - 1]!);
    }
    expect(closest).toBeGreaterThanOrEqual(GAP_MS);

    // A drain at the end: the supervisor's SIGTERM stops every child, which release their leases.
    process.kill(sup.pid!, 'SIGTERM');
    expect(await supExit).toBe(0);
    expect(await store.db.selectFrom('lease').select('resource').where('resource', 'like', 'mailbox:%').where('expires_at', '>', new Date()).execute()).toEqual([]);

    const restarts = [...out.matchAll(/supervisor: role (\w+) (?:exited|killed)[^"]*; restart/g)].length;
    const crashes = out.split('\n').filter((l) => /"level":(50|60)/.test(l) || /^error: /.test(l));
    const ms = takeovers.map((t) => t.ms).sort((a, b) => a - b);
    console.log(
      `chaos (seed ${SEED}): ${KILLS} kills (${takeovers.filter((t) => t.signal === 'SIGKILL').length} SIGKILL, ${takeovers.filter((t) => t.signal === 'SIGTERM').length} SIGTERM), ${restarts} restarts; ` +
        `${total} sends: ${total - possibly} sent, each delivered once, ${possibly} possibly_sent (killed mid-send; none delivered twice); ${replies.size} replies, all stored; closest claims of a mailbox ${closest} ms apart (gap ${GAP_MS} ms); ` +
        `kill -> restarted child holds the role's leases: median ${ms[Math.floor(ms.length / 2)]} ms, max ${ms[ms.length - 1]} ms; settled ${settledMs} ms after the last kill\n` +
        takeovers.map((t) => `  ${t.signal} ${t.role}: ${t.ms} ms`).join('\n') +
        (crashes.length ? `\nerrors in the children's log:\n${crashes.join('\n')}` : ''),
    );
    // Every kill was restarted; a restart beyond them is a child that crashed on its own, which the
    // supervisor is there for (printed above; seen: two children creating the same event partition
    // at once, store/partitions.ts).
    expect(restarts).toBeGreaterThanOrEqual(KILLS);
  }, 900_000);
});
