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
import { bedEndpoint, countByMessageId, mailBed, readInbox } from '../../test/mail/mailbed.ts';
import { trackingKey } from './compose/tracking.ts';
import { SenderPool } from './sender-pool.ts';

/**
 * SIGTERM in the middle of a send, with the real program: `cadenza start --roles sender` in a
 * child process on PostgreSQL, sending through the bed's Postfix behind the fault proxy, which
 * holds the server's reply to the DATA terminator for a few seconds. The signal lands while the
 * message is being handed over. The process must wait for the reply, record the send, claim
 * nothing more, release its leases and exit 0; the mailbox's pacing state (the sends the store
 * counts) must let the next owner continue at pace.
 *
 * Mail-bed users: sync26 (mailbox A, through the proxy), sync27 (mailbox B, direct), sync28-30
 * (prospects).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsxCli = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const pass = 'pass';
const user = (n: number) => `sync${n}@inbox.test`;
const HOLD_MS = 8_000; // the server's 250 held this long: longer than the sender's idle poll (5 s)
const GAP_MIN = 2;

/** An Etc/GMT zone where it is about noon now, so the mailbox's working day is open whenever the test runs. */
function noonZone(now: number): string {
  const offset = Math.max(-12, Math.min(12, 12 - new Date(now).getUTCHours()));
  // Etc/GMT names carry the opposite sign (POSIX): Etc/GMT-5 is UTC+5.
  return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

describeMailBed('SIGTERM while a message is handed to the server', () => {
  let store: TestStore;
  let proxy: FaultProxy;
  let child: ChildProcess | undefined;
  let dataDir: string;
  beforeAll(async () => {
    store = await freshStore('postgres');
    proxy = await startFaultProxy({ host: mailBed.host, port: mailBed.submissionPort }, { kind: 'delay', ms: HOLD_MS, only: 'final_reply' });
    dataDir = mkdtempSync(join(tmpdir(), 'cadenza-sigterm-'));
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await proxy.close();
    await store.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes the message in hand, records it, claims nothing more, releases its leases, exits 0; the next owner keeps the pace', async () => {
    const now = Date.now();
    const random = seededRandom(26);
    const clock = new SimClock(now);
    const master = randomBytes(32);
    const tag = randomBytes(4).toString('hex');
    const uuid = (kind: string) => `00000000-0000-7000-${kind}-${randomBytes(6).toString('hex')}`;
    const zone = noonZone(now);

    const ws = uuid('8000');
    await store.db.insertInto('workspace').values({ id: ws, name: 'Acme', time_zone: zone }).execute();
    // A calm day (open about noon +- 11 h, no lunch), gaps of 2-3 minutes, no pickup delay.
    const pacing = { dayStart: '00:45', dayEnd: '23:15', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [GAP_MIN, GAP_MIN + 1], hourlyCeiling: [20, 20], pickupMinutes: 0 };
    const vault = new Vault(store, localKeyWrapper(master));
    const mailboxA = uuid('8001');
    const mailboxB = uuid('8002');
    for (const [id, n, smtp] of [
      [mailboxA, 26, { host: proxy.host, port: proxy.port, security: 'none', allowSelfSigned: true }],
      [mailboxB, 27, bedEndpoint('smtp', 'none')],
    ] as const) {
      const settings = { smtp, imap: bedEndpoint('imap'), serverSavesSent: false, pacing };
      await store.db.insertInto('mailbox').values({ id, workspace_id: ws, email: user(n), provider: 'smtp_imap', daily_cap: 30, settings: JSON.stringify(settings), time_zone: zone }).execute();
      await vault.put(ws, id, { kind: 'password', username: user(n), password: pass });
    }
    const lead = async (n: number) => {
      const id = uuid('8003');
      const email = user(n).replace('@', `+${tag}@`);
      await store.db.insertInto('lead').values({ id, workspace_id: ws, email, email_norm: email, first_name: `Sync${n}`, time_zone: zone }).execute();
      return id;
    };
    const service = new EnrollmentService({ store, clock, random });
    const sequence = async (key: string, mailbox: string, leads: string[]) => {
      const def = validateDefinition({ key, name: key, window: 'any', holidays: false, jitter_minutes: 0, mailboxes: [mailbox], steps: [{ key: 'intro', type: 'email', subject: `Hello {{first_name}} ${tag}`, body: 'Hi {{first_name}}' }] });
      const seq = await applyDefinition(store, { clock, random }, ws, def);
      await bulkEnroll(store, { clock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leads });
    };
    await sequence('a', user(26), [await lead(28), await lead(29)]);
    await sequence('b', user(27), [await lead(30)]);
    await service.fireDue(100);
    const requests = () => store.db.selectFrom('send_request').selectAll().orderBy('id').execute();
    expect(await requests()).toHaveLength(3);
    // B's send is for tomorrow: its loop idles (polling) while the child runs.
    await store.db.updateTable('send_request').set({ due_at: new Date(now + 86_400_000) }).where('mailbox_id', '=', mailboxB).execute();

    let output = '';
    child = spawn(process.execPath, [tsxCli, join(root, 'src', 'cli', 'main.ts'), 'start', '--roles', 'sender'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: store.url!, CADENZA_DATA_DIR: dataDir, CADENZA_MASTER_KEY: master.toString('base64'), CADENZA_PUBLIC_URL: 'https://cadenza.example.test', CADENZA_ROLES: 'sender' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (b: Buffer) => void (output += b.toString()));
    child.stderr!.on('data', (b: Buffer) => void (output += b.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => child!.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));

    // The first message of A reached Postfix with its terminator; Postfix's 250 is held by the proxy.
    await proxy.waitFor('terminators', 1, 90_000).catch((e: Error) => {
      throw new Error(`${e.message}\n--- sender output ---\n${output}`);
    });
    const inHand = (await requests()).filter((r) => r.state === 'in_flight');
    expect(inHand, output).toHaveLength(1);
    const first = inHand[0]!;
    const signalledAt = Date.now();
    child.kill('SIGTERM');
    // After the signal, B's request becomes due now: a sender that still claimed would take it at
    // its next poll, which comes before the held reply is released.
    const bRequest = (await requests()).find((r) => r.mailbox_id === mailboxB)!;
    await store.db.updateTable('send_request').set({ due_at: new Date(signalledAt - 1000), send_at: new Date(signalledAt - 1000), planned_at: new Date(signalledAt - 1000) }).where('id', '=', bRequest.id).execute();

    const exit = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 45_000))]);
    expect(exit, `the sender did not exit within 45 s of SIGTERM\n${output}`).not.toBeNull();
    expect(exit!.code, output).toBe(0);
    // It waited for the server's reply (held HOLD_MS from just before the signal) rather than
    // dropping the message; half of it, for a loaded machine's delay between terminator and signal.
    expect(exit!.at - signalledAt).toBeGreaterThanOrEqual(HOLD_MS / 2);
    expect(proxy.stats).toMatchObject({ connections: 1, terminators: 1, dropped: 0 });

    const after = await requests();
    const a1 = after.find((r) => r.id === first.id)!;
    expect(a1.state).toBe('sent');
    expect(a1.claimed_at).not.toBeNull();
    // Nothing else claimed: A's second request waits for its gap, B's was never touched.
    const a2 = after.find((r) => r.mailbox_id === mailboxA && r.id !== first.id)!;
    const b = after.find((r) => r.id === bRequest.id)!;
    for (const r of [a2, b]) {
      expect(r.state).toBe('queued');
      expect(r.claimed_at).toBeNull();
      expect(r.attempts).toBe(0);
    }
    expect(await store.db.selectFrom('lease').selectAll().execute()).toEqual([]);
    const msg = await store.db.selectFrom('message').select(['message_id', 'to_addrs']).where('send_request_id', '=', a1.id).executeTakeFirstOrThrow();
    const to = msg.to_addrs[0]!.replace(/\+[^@]*/, '');
    expect((await readInbox(to, pass, msg.message_id)).length).toBe(1);
    expect(await countByMessageId(to, pass, msg.message_id)).toBe(1);

    // The next owner: a sender in this process takes both mailboxes and continues A's day at pace.
    proxy.setMode({ kind: 'pass' });
    const sim = new SimClock(Date.now());
    const pool = new SenderPool({
      store,
      service: new EnrollmentService({ store, clock: sim, random }),
      clock: sim,
      random,
      vault,
      trackingKey: trackingKey(master),
      publicUrl: 'https://cadenza.example.test',
      idlePollMs: 30_000,
      // The simulated clock runs a few hundred times faster than the real SMTP exchange: a lease
      // of a simulated minute could lapse inside one real send on a loaded machine (fencing then
      // refuses the record). This test is about the pace carried over, not about lease expiry.
      leaseTtlMs: 24 * 3_600_000,
      connectors: { smtpTimeouts: { totalMs: 24 * 3_600_000 } },
    });
    await pool.start();
    expect(pool.mailboxes.sort()).toEqual([mailboxA, mailboxB].sort());
    const stateOf = async (id: string) => (await store.db.selectFrom('send_request').select(['state', 'claimed_at']).where('id', '=', id).executeTakeFirstOrThrow());
    for (let i = 0; i < 720 && ((await stateOf(a2.id)).state !== 'sent' || (await stateOf(b.id)).state !== 'sent'); i++) {
      sim.advance(5_000);
      await new Promise((r) => setTimeout(r, 25));
    }
    let stopped = false;
    const stopping = pool.stop().then(() => void (stopped = true));
    while (!stopped) {
      sim.advance(15_000);
      await new Promise((r) => setTimeout(r, 10));
    }
    await stopping;
    const a2After = await stateOf(a2.id);
    const why = async () => JSON.stringify(await store.db.selectFrom('send_request').select(['id', 'state', 'due_at', 'send_at', 'plan_note', 'claimed_at', 'last_error']).where('mailbox_id', 'in', [mailboxA, mailboxB]).execute());
    expect(a2After.state, await why()).toBe('sent');
    expect((await stateOf(b.id)).state).toBe('sent');
    // The gap after the send the first owner made is kept by the second.
    expect(a2After.claimed_at!.getTime() - a1.claimed_at!.getTime()).toBeGreaterThanOrEqual(GAP_MIN * 60_000);
    // The day's count for A is exactly its two sends, each delivered once.
    const counted = await store.db.selectFrom('send_request').select('id').where('mailbox_id', '=', mailboxA).where('claimed_at', 'is not', null).where('state', 'in', ['in_flight', 'sent', 'unknown', 'failed']).execute();
    expect(counted).toHaveLength(2);
    for (const m of await store.db.selectFrom('message').select(['message_id', 'to_addrs']).where('direction', '=', 'outbound').execute()) {
      const who = m.to_addrs[0]!.replace(/\+[^@]*/, '');
      await readInbox(who, pass, m.message_id);
      expect(await countByMessageId(who, pass, m.message_id)).toBe(1);
    }
    expect(await store.db.selectFrom('lease').selectAll().execute()).toEqual([]);
  }, 240_000);
});
