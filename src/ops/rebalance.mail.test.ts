import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { describeMailBed } from '../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, countByMessageId, readInbox } from '../../test/mail/mailbed.ts';

/**
 * Two real `cadenza start --roles sender,sync` processes on one PostgreSQL, sending through the
 * bed's Postfix and reading through its Dovecot. The first holds all three mailboxes (sender and
 * sync leases); the second joins and must get its share within seconds (before 0020 it got none:
 * pools took only free leases and never gave back); then the first is SIGKILLed and the second must
 * take everything over at once (same host, the dead pid is proof) instead of after the 60 s TTL.
 * Every message sent is delivered exactly once, and what was planned stays planned across the moves.
 *
 * Mail-bed users: sync61-63 (the mailboxes, server files the Sent copy), sync64-66 (prospects).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsxCli = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const pass = 'pass';
const user = (n: number) => `sync${n}@inbox.test`;

function noonZone(now: number): string {
  const offset = Math.max(-12, Math.min(12, 12 - new Date(now).getUTCHours()));
  return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

describeMailBed('two processes on one PostgreSQL share the mailboxes', () => {
  let store: TestStore;
  const children: ChildProcess[] = [];
  // tsx runs the program in a child of its own: these are the pids that hold leases (from the member table).
  const programs: number[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    store = await freshStore('postgres');
  });
  afterAll(async () => {
    for (const pid of programs) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await store.destroy();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a joining process gets its share within seconds; a killed one is taken over at once; nothing is sent twice, early or lost', async () => {
    const now = Date.now();
    const random = seededRandom(61);
    const master = randomBytes(32);
    const tag = randomBytes(4).toString('hex');
    const uuid = (kind: string) => `00000000-0000-7000-${kind}-${randomBytes(6).toString('hex')}`;
    const zone = noonZone(now);
    const ws = uuid('8000');
    await store.db.insertInto('workspace').values({ id: ws, name: 'Acme', time_zone: zone }).execute();
    const pacing = { dayStart: '00:45', dayEnd: '23:15', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [1, 1.2], hourlyCeiling: [60, 60], pickupMinutes: 0 };
    const vault = new Vault(store, localKeyWrapper(master));
    const clock = systemClock;
    const mailboxes: string[] = [];
    for (const n of [61, 62, 63]) {
      const id = uuid('8001');
      mailboxes.push(id);
      const settings = { smtp: bedEndpoint('smtp', 'none'), imap: bedEndpoint('imap'), serverSavesSent: true, pacing };
      await store.db.insertInto('mailbox').values({ id, workspace_id: ws, email: user(n), provider: 'smtp_imap', daily_cap: 30, settings: JSON.stringify(settings), time_zone: zone }).execute();
      await vault.put(ws, id, { kind: 'password', username: user(n), password: pass });
      // Two prospects per mailbox: the first sends leave at once, the second are planned later.
      const leads: string[] = [];
      for (const [i, p] of [64, 65, 66].entries()) {
        if (i >= 2) break;
        const lid = uuid('8003');
        const email = user(p).replace('@', `+r${n}${tag}@`);
        await store.db.insertInto('lead').values({ id: lid, workspace_id: ws, email, email_norm: email, first_name: `P${p}`, time_zone: zone }).execute();
        leads.push(lid);
      }
      const def = validateDefinition({ key: `s${n}`, name: `s${n}`, window: 'any', holidays: false, jitter_minutes: 0, mailboxes: [user(n)], steps: [{ key: 'intro', type: 'email', subject: `Hello {{first_name}} ${tag}`, body: 'Hi {{first_name}}' }] });
      const seq = await applyDefinition(store, { clock, random }, ws, def);
      await bulkEnroll(store, { clock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leads });
    }

    const outputs = new Map<number, string>();
    /** Starts a process; resolves with its program's pid once both its pools joined the member table. */
    const start = async (): Promise<{ child: ChildProcess; pid: number; joinedAt: number }> => {
      const c = launch();
      let pid = 0;
      const joinedAt = await waitFor('a process joins', async () => {
        const rows = await store.db.selectFrom('member').select('pid').execute();
        const fresh = [...new Set(rows.map((r) => r.pid))].filter((p) => !programs.includes(p));
        const mine = fresh.find((p) => rows.filter((r) => r.pid === p).length >= 2);
        if (mine) pid = mine;
        return mine !== undefined;
      }, 90_000);
      programs.push(pid);
      return { child: c, pid, joinedAt };
    };
    const launch = (): ChildProcess => {
      const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-rebalance-'));
      dirs.push(dataDir);
      const c = spawn(process.execPath, [tsxCli, join(root, 'src', 'cli', 'main.ts'), 'start', '--roles', 'scheduler,sender,sync'], {
        cwd: root,
        env: { ...process.env, DATABASE_URL: store.url!, CADENZA_DATA_DIR: dataDir, CADENZA_MASTER_KEY: master.toString('base64'), CADENZA_PUBLIC_URL: 'https://cadenza.example.test', CADENZA_ROLES: 'scheduler,sender,sync', CADENZA_DOMAIN_CHECKS: 'off' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(c);
      outputs.set(c.pid!, '');
      const add = (b: Buffer) => void outputs.set(c.pid!, outputs.get(c.pid!)! + b.toString());
      c.stdout!.on('data', add);
      c.stderr!.on('data', add);
      return c;
    };
    const held = async (pid: number) => {
      const rows = await store.db.selectFrom('lease').select(['resource']).where('owner', 'like', `${hostname()}:${pid}:%`).where('expires_at', '>', new Date()).execute();
      return { send: rows.filter((r) => r.resource.startsWith('mailbox:')).length, sync: rows.filter((r) => r.resource.startsWith('sync:')).length };
    };
    const waitFor = async (what: string, cond: () => Promise<boolean>, ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (await cond()) return Date.now();
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${what}: not within ${ms} ms\n${[...outputs.values()].join('\n---\n').slice(-6000)}`);
    };

    const a = await start();
    await waitFor('first process holds every mailbox', async () => {
      const h = await held(a.pid);
      return h.send === 3 && h.sync === 3;
    }, 90_000);
    const b = await start();
    const bShare = await waitFor('second process gets its share', async () => {
      const [ha, hb] = [await held(a.pid), await held(b.pid)];
      return hb.send >= 1 && hb.sync >= 1 && ha.send + hb.send === 3 && ha.sync + hb.sync === 3;
    }, 30_000);
    const joinMs = bShare - b.joinedAt;

    const killedAt = Date.now();
    process.kill(a.pid, 'SIGKILL');
    const takenOver = await waitFor('survivor takes every mailbox', async () => {
      const h = await held(b.pid);
      return h.send === 3 && h.sync === 3;
    }, 30_000);
    const takeoverMs = takenOver - killedAt;
    console.log(`rebalance: join -> share ${joinMs} ms; SIGKILL -> survivor holds all ${takeoverMs} ms`);
    expect(joinMs).toBeLessThan(10_000);
    expect(takeoverMs).toBeLessThan(10_000);

    // The first three were sent before the moves; the second ones are planned later in the day (a
    // new mailbox's ramp), and the moves kept that plan: none was sent early (no burst at the new
    // owner), none is left in flight or unknown, none vanished.
    const rows = await store.db.selectFrom('send_request').select(['state', 'send_at']).execute();
    expect(rows).toHaveLength(6);
    expect(rows.filter((r) => r.state === 'sent')).toHaveLength(3);
    for (const r of rows.filter((x) => x.state !== 'sent')) {
      expect(r.state).toBe('queued');
      expect(r.send_at!.getTime()).toBeGreaterThan(Date.now());
    }
    const msgs = await store.db.selectFrom('message').select(['message_id', 'to_addrs']).where('direction', '=', 'outbound').execute();
    expect(msgs).toHaveLength(3);
    for (const m of msgs) {
      const to = m.to_addrs[0]!.replace(/\+[^@]*/, '');
      await readInbox(to, pass, m.message_id);
      expect(await countByMessageId(to, pass, m.message_id)).toBe(1);
    }
    const exited = new Promise((r) => b.child.once('exit', r));
    process.kill(b.pid, 'SIGTERM');
    await exited;
    expect(await store.db.selectFrom('lease').selectAll().where('owner', 'like', `${hostname()}:${b.pid}:%`).execute()).toEqual([]);
    expect(outputs.get(b.child.pid!)).not.toMatch(/push bus connection lost/);
  }, 420_000);
});
