import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { describeMailBed } from '../../test/mail/describe-mail-bed.ts';
import { startFaultProxy, type FaultProxy } from '../../test/mail/fault-proxy.ts';
import { bedEndpoint, countByMessageId, mailBed } from '../../test/mail/mailbed.ts';

/**
 * SIGKILL during a burst, with the real program (issue 10, promise 1): `cadenza start --roles
 * sender` in a child process on PostgreSQL, 8 password mailboxes (sync41..44: the server files
 * the Sent copy, serverSavesSent true; sync81..84: it does not, Cadenza writes it), 16 prospects
 * (plus-addresses of sync49..52), one step each. Every mailbox's first send goes through the fault
 * proxy, which holds Postfix's 250 to the DATA terminator: Postfix has accepted and delivers the
 * message, Cadenza has not heard it. The process is killed (SIGKILL) once all 8 are held and the
 * first have reached the prospects: the window between "the server accepted" and "the send is
 * recorded", 8 times at once. A second `cadenza start` then takes over (a short lease TTL and
 * grace period through the environment; the production defaults stay) and settles everything.
 *
 * Verdict from the prospects' INBOXes: every step-1 Message-ID is there exactly once, recorded sent
 * or possibly_sent (the 4 of the Cadenza-written mailboxes, whose pending copy cannot tell), never
 * twice. Before the fix, the copy was appended only after the 250, the restarted process found
 * none, read that as "never sent" after the grace period and sent those 4 again: duplicates.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
// tsx's loader in this very process (not tsx's CLI, which runs the program in a grandchild that a
// SIGKILL of its parent would leave running): the pid killed is the pid that sends.
const tsxLoader = join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
const pass = 'pass';
const user = (n: number) => `sync${n}@inbox.test`;
const serverFiles = [41, 42, 43, 44];
const cadenzaWrites = [81, 82, 83, 84];
const prospectUsers = [49, 50, 51, 52];
const HOLD_MS = 30_000; // longer than the kill comes: the first owner never hears a 250
const GAP_MIN = 1; // the shortest gap pacing allows: each mailbox's second send comes a minute after its first

/** An Etc/GMT zone where it is about noon now, so the mailbox's working day is open whenever the test runs. */
function noonZone(now: number): string {
  const offset = Math.max(-12, Math.min(12, 12 - new Date(now).getUTCHours()));
  return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

describeMailBed('SIGKILL during a burst on mailboxes of both Sent-copy modes', () => {
  let store: TestStore;
  let proxy: FaultProxy;
  const children: ChildProcess[] = [];
  let dataDir: string;
  beforeAll(async () => {
    store = await freshStore('postgres');
    proxy = await startFaultProxy({ host: mailBed.host, port: mailBed.submissionPort }, { kind: 'delay', ms: HOLD_MS, only: 'final_reply' });
    dataDir = mkdtempSync(join(tmpdir(), 'cadenza-sigkill-'));
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await proxy.close();
    await store.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every step-1 Message-ID reaches its prospect exactly once: sent, or recorded possibly_sent; never twice', async () => {
    const now = Date.now();
    const random = seededRandom(41);
    const clock = new SimClock(now);
    const master = randomBytes(32);
    const tag = randomBytes(4).toString('hex');
    const uuid = (kind: string) => `00000000-0000-7000-${kind}-${randomBytes(6).toString('hex')}`;
    const zone = noonZone(now);

    const ws = uuid('8000');
    await store.db.insertInto('workspace').values({ id: ws, name: 'Acme', time_zone: zone }).execute();
    // A big daily cap: a quiet day stretches the gap towards (time left / sends left), pacing/bucket.ts.
    const pacing = { dayStart: '00:45', dayEnd: '23:15', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [GAP_MIN, GAP_MIN], hourlyCeiling: [60, 60], pickupMinutes: 0 };
    const vault = new Vault(store, localKeyWrapper(master));
    const smtp = { host: proxy.host, port: proxy.port, security: 'none', allowSelfSigned: true } as const;
    const mailboxes: Array<{ id: string; n: number; serverSavesSent: boolean }> = [];
    for (const n of [...serverFiles, ...cadenzaWrites]) {
      const id = uuid('8001');
      const serverSavesSent = serverFiles.includes(n);
      const settings = { smtp, imap: bedEndpoint('imap'), serverSavesSent, pacing };
      await store.db.insertInto('mailbox').values({ id, workspace_id: ws, email: user(n), provider: 'smtp_imap', daily_cap: 1000, settings: JSON.stringify(settings), time_zone: zone }).execute();
      await vault.put(ws, id, { kind: 'password', username: user(n), password: pass });
      mailboxes.push({ id, n, serverSavesSent });
    }
    // Two prospects per mailbox, spread over the four prospect users.
    let k = 0;
    for (const m of mailboxes) {
      const leads: string[] = [];
      for (let j = 0; j < 2; j++, k++) {
        const id = uuid('8003');
        const email = user(prospectUsers[k % 4]!).replace('@', `+${tag}-${k}@`);
        await store.db.insertInto('lead').values({ id, workspace_id: ws, email, email_norm: email, first_name: `P${k}`, time_zone: zone }).execute();
        leads.push(id);
      }
      const def = validateDefinition({ key: `s${m.n}`, name: `s${m.n}`, window: 'any', holidays: false, jitter_minutes: 0, mailboxes: [user(m.n)], steps: [{ key: 'intro', type: 'email', subject: `Hello {{first_name}} ${tag}`, body: 'Hi {{first_name}}' }] });
      const seq = await applyDefinition(store, { clock, random }, ws, def);
      await bulkEnroll(store, { clock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leads });
    }
    await new EnrollmentService({ store, clock, random }).fireDue(100);
    const requests = () =>
      store.db
        .selectFrom('send_request as r')
        .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
        .innerJoin('lead as l', 'l.id', 'e.lead_id')
        .select(['r.id', 'r.mailbox_id', 'r.state', 'r.message_id', 'r.claimed_at', 'r.last_error', 'r.send_at', 'r.plan_note', 'l.email'])
        .orderBy('r.id')
        .execute();
    expect(await requests()).toHaveLength(16);

    let output = '';
    const start = (label: string) => {
      const child = spawn(process.execPath, ['--import', tsxLoader, join(root, 'src', 'cli', 'main.ts'), 'start', '--roles', 'sender'], {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: store.url!,
          CADENZA_DATA_DIR: dataDir,
          CADENZA_MASTER_KEY: master.toString('base64'),
          CADENZA_PUBLIC_URL: 'https://cadenza.example.test',
          CADENZA_ROLES: 'sender',
          // Test timings (production: 60 s lease, 15 min grace, resolve every minute).
          CADENZA_SENDER_LEASE_TTL_MS: '3000',
          CADENZA_UNKNOWN_GRACE_MS: '3000',
          CADENZA_SENDER_RESOLVE_EVERY_MS: '500',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      child.stdout!.on('data', (b: Buffer) => void (output += `[${label}] ${b.toString()}`));
      child.stderr!.on('data', (b: Buffer) => void (output += `[${label}] ${b.toString()}`));
      return child;
    };

    // 1. The burst: every mailbox hands its first message over; every 250 is held.
    const first = start('first');
    await proxy.waitFor('terminators', 8, 60_000).catch((e: Error) => {
      throw new Error(`${e.message}\n--- output ---\n${output}`);
    });
    const inFlight = (await requests()).filter((r) => r.state === 'in_flight');
    expect(inFlight, output).toHaveLength(8);
    // The first deliveries are at the prospects (Postfix accepted them), then the kill.
    const seen = async () => {
      let n = 0;
      for (const r of inFlight) n += await countByMessageId(r.email.replace(/\+[^@]*/, ''), pass, r.message_id!);
      return n;
    };
    for (let i = 0; i < 100 && (await seen()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await seen()).toBeGreaterThan(0);
    const killedAt = Date.now();
    first.kill('SIGKILL');
    await new Promise<void>((r) => (first.exitCode !== null || first.signalCode !== null ? r() : first.once('exit', () => r())));

    // 2. The restart: the proxy passes replies again; the new process takes the mailboxes once the
    // dead one's 3 s leases lapse, settles the 8 unknown sends and sends the 8 second steps.
    proxy.setMode({ kind: 'pass' });
    start('second');
    const final = new Set(['sent', 'possibly_sent', 'failed', 'cancelled']);
    // Long enough for a wrongly requeued send to go again too: it waits the mailbox's gap (1 min).
    const deadline = Date.now() + 150_000;
    while (Date.now() < deadline && !(await requests()).every((r) => final.has(r.state))) await new Promise((r) => setTimeout(r, 500));
    const after = await requests();
    output += `[test] settled ${Date.now() - killedAt} ms after the kill\n`;
    const table = JSON.stringify(after.map((r) => ({ state: r.state, to: r.email, error: r.last_error, sendAt: r.send_at, note: r.plan_note })), null, 1);
    expect(after.every((r) => final.has(r.state)), `${table}\n${output}`).toBe(true);
    // Let any late delivery land before counting.
    await new Promise((r) => setTimeout(r, 1500));

    // 3. The verdict, from the INBOXes.
    const savesSent = new Map(mailboxes.map((m) => [m.id, m.serverSavesSent]));
    const heldIds = new Set(inFlight.map((r) => r.id));
    for (const r of after) {
      const copies = await countByMessageId(r.email.replace(/\+[^@]*/, ''), pass, r.message_id!);
      const where = `${r.email} ${r.message_id} (${r.state}: ${r.last_error ?? ''})`;
      expect(copies, `copies of ${where}`).toBe(1);
      if (heldIds.has(r.id) && !savesSent.get(r.mailbox_id!)) {
        // Cadenza's own copy is still pending: it cannot tell, so it says so, and did not resend.
        expect(r.state, where).toBe('possibly_sent');
      } else {
        // The server's own copy proves the held ones; the second steps were heard normally.
        expect(r.state, where).toBe('sent');
      }
    }
    // The restarted process settled the held sends from the Sent folders, not by sending again.
    expect(proxy.stats.terminators, output).toBe(16);
  }, 240_000);
});
