import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { afterEach, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, MAILBED_SCRIPT, mailBed, readInbox, resetMailBed } from '../../../test/mail/mailbed.ts';
import type { ImapAccount } from '../imap/account.ts';
import { createImapSync, type ImapSyncOptions } from './imap-sync.ts';
import type { MailboxSync, SyncBatch } from './source.ts';

/**
 * The IMAP sync connector against the bed's Dovecot (CONDSTORE, QRESYNC, IDLE, SPECIAL-USE),
 * users sync1..sync10@inbox.test, one per test, emptied at its start.
 */

const run = promisify(execFile);
const DAY = 86_400_000;
const user = (n: number) => `sync${n}@inbox.test`;
const account = (n: number, over: Partial<ImapAccount> = {}): ImapAccount => ({
  endpoint: bedEndpoint('imap'),
  username: user(n),
  auth: { kind: 'password', password: 'pass' },
  timeouts: { connectMs: 3_000, greetingMs: 3_000, socketMs: 10_000 },
  ...over,
});

const opened: MailboxSync[] = [];
function sync(n: number, over: Partial<ImapSyncOptions> = {}): MailboxSync {
  const s = createImapSync({ account: account(n), random: seededRandom(n), ...over });
  opened.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function collect(it: AsyncIterable<SyncBatch>): Promise<SyncBatch[]> {
  const out: SyncBatch[] = [];
  for await (const b of it) out.push(b);
  return out;
}
const ids = (batches: SyncBatch[]) => batches.flatMap((b) => b.messages.map((m) => messageIdOf(m.raw)));
const last = (batches: SyncBatch[]) => batches[batches.length - 1]!.cursor;

function messageIdOf(raw: Uint8Array): string {
  return /^Message-ID:\s*(\S+)/im.exec(Buffer.from(raw).toString('latin1'))?.[1] ?? '';
}
function message(to: string, id: string, body = 'hello'): Buffer {
  return Buffer.from(`From: prospect@example.test\r\nTo: ${to}\r\nSubject: re: hello\r\nMessage-ID: ${id}\r\nDate: ${new Date().toUTCString()}\r\n\r\n${body}\r\n`);
}
const newId = () => `<${randomUUID()}@example.test>`;

async function withBedClient<T>(n: number, fn: (c: ImapFlow) => Promise<T>): Promise<T> {
  const c = new ImapFlow({ host: mailBed.host, port: mailBed.imapPort, secure: false, doSTARTTLS: false, auth: { user: user(n), pass: 'pass' }, logger: false, disableAutoIdle: true });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.logout().catch(() => c.close());
  }
}
/** APPENDs messages (INTERNALDATE = date) to a folder; returns their Message-IDs. */
async function append(n: number, folder: string, count: number, opts: { date?: Date; body?: string } = {}): Promise<string[]> {
  return withBedClient(n, async (c) => {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = newId();
      await c.append(folder, message(user(n), id, opts.body), [], opts.date ?? new Date());
      out.push(id);
    }
    return out;
  });
}
/** Delivers through Postfix's injection port (a "remote" sender) and waits until it is in INBOX. */
async function inject(to: string, id: string): Promise<void> {
  const t = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
  try {
    await t.sendMail({ envelope: { from: 'prospect@example.test', to: [to] }, raw: message(to, id) });
  } finally {
    t.close();
  }
}
const doveadm = (...args: string[]) => run('bash', [MAILBED_SCRIPT, 'doveadm', ...args]);
const fresh = (n: number) => resetMailBed([user(n)]);

describeMailBed('IMAP sync against Dovecot', () => {
  it('first sync takes only the resync window (not the history), in INBOX and Junk, marks nothing \\Seen', async () => {
    await fresh(1);
    await append(1, 'INBOX', 3, { date: new Date(Date.now() - 60 * DAY) });
    const recent = await append(1, 'INBOX', 2);
    const junk = await append(1, 'Junk', 1);
    await append(1, 'Junk', 1, { date: new Date(Date.now() - 30 * DAY) });

    const batches = await collect(sync(1).pull(null, { resyncWindowMs: 14 * DAY }));
    expect(batches.every((b) => b.mode === 'resync')).toBe(true);
    expect(ids(batches)).toEqual([...recent, ...junk]);
    const msgs = batches.flatMap((b) => b.messages);
    expect(msgs.map((m) => m.folder)).toEqual(['inbox', 'inbox', 'junk']);
    // UIDs keep counting across the bed's resets: compare with the keys' own UIDs.
    const uidOf = (key: string) => Number(/^(?:INBOX|Junk):\d+:(\d+)$/.exec(key)?.[1]);
    expect(uidOf(msgs[1]!.key)).toBe(uidOf(msgs[0]!.key) + 1);
    expect(Math.abs(msgs[0]!.receivedAt! - Date.now())).toBeLessThan(60_000);
    expect(msgs[0]!.threadId).toBeNull();
    const cursor = last(batches) as { folders: Record<string, { lastUid: number; highestModseq?: string }> };
    expect(cursor.folders.inbox!.lastUid).toBe(uidOf(msgs[1]!.key));
    expect(cursor.folders.junk!.lastUid).toBe(uidOf(msgs[2]!.key) + 1); // the old one after it is seen, not taken
    expect(cursor.folders.inbox!.highestModseq).toMatch(/^\d+$/);
    const flags = await withBedClient(1, async (c) => {
      await c.mailboxOpen('INBOX', { readOnly: true });
      const out: string[][] = [];
      for await (const m of c.fetch('1:*', { flags: true })) out.push([...(m.flags ?? [])]);
      return out;
    });
    expect(flags.flat()).not.toContain('\\Seen');
  });

  it('pulls what arrived since the cursor, once; an unchanged mailbox yields nothing (CONDSTORE and UID-only)', async () => {
    for (const useCondstore of [true, false]) {
      await fresh(2);
      const s = sync(2, { useCondstore });
      const first = await collect(s.pull(null));
      expect(first.flatMap((b) => b.messages)).toEqual([]);
      let cursor = last(first);

      const idsIn = [newId(), newId(), newId()];
      for (const id of idsIn) await inject(user(2), id);
      for (const id of idsIn) expect(await readInbox(user(2), 'pass', id)).toHaveLength(1);
      const second = await collect(s.pull(cursor));
      expect(second.every((b) => b.mode === 'incremental')).toBe(true);
      expect(ids(second)).toEqual(idsIn);
      cursor = last(second);
      const inbox = (cursor as { folders: { inbox: { highestModseq?: string } } }).folders.inbox;
      // The CONDSTORE path keeps HIGHESTMODSEQ (compared as a string, exact beyond 2^53); UID-only does not.
      expect(inbox.highestModseq !== undefined).toBe(useCondstore);

      expect(await collect(s.pull(cursor))).toEqual([]);
      // A flag change moves HIGHESTMODSEQ but brings no message: at most a cursor update.
      await withBedClient(2, async (c) => {
        await c.mailboxOpen('INBOX');
        await c.messageFlagsAdd('1:*', ['\\Seen']);
      });
      const afterFlags = await collect(s.pull(cursor));
      expect(afterFlags.flatMap((b) => b.messages)).toEqual([]);
      if (afterFlags.length) cursor = last(afterFlags);
      expect(await collect(s.pull(cursor))).toEqual([]);
    }
  });

  it('yields batches of batchSize, each cursor covering what came before; a crash after a batch replays the rest exactly once', async () => {
    await fresh(3);
    const s = sync(3);
    const start = last(await collect(s.pull(null)));
    const all = await append(3, 'INBOX', 7);

    const batches = await collect(s.pull(start, { batchSize: 3 }));
    expect(batches.map((b) => b.messages.length)).toEqual([3, 3, 1]);
    expect(ids(batches)).toEqual(all);
    const lastUids = batches.map((b) => (b.cursor as { folders: { inbox: { lastUid: number } } }).folders.inbox.lastUid);
    const base = (start as { folders: { inbox: { lastUid: number } } }).folders.inbox.lastUid;
    expect(lastUids.map((u) => u - base)).toEqual([3, 6, 7]);

    // The worker stored batch 1 and crashed before storing batch 2: it pulls from batch 1's cursor.
    const replay = await collect(s.pull(batches[0]!.cursor, { batchSize: 3 }));
    expect(ids(replay)).toEqual(all.slice(3));
    expect(last(replay)).toEqual(last(batches));
    // Aborting stops the pull with the signal's reason and leaves no connection open.
    const ac = new AbortController();
    const it = s.pull(start, { batchSize: 1, signal: ac.signal })[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    ac.abort(new Error('shutting down'));
    await expect(it.next()).rejects.toThrow('shutting down');
    await s.close();
    for (let i = 0; i < 50 && process.getActiveResourcesInfo().includes('TCPSocketWrap'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap')).toEqual([]);
  });

  it('a changed UIDVALIDITY (INBOX updated, Junk deleted and recreated) brings a bounded resync of that folder only', async () => {
    await fresh(4);
    const s = sync(4);
    await append(4, 'INBOX', 1, { date: new Date(Date.now() - 40 * DAY) });
    const inboxIds = await append(4, 'INBOX', 2);
    const cursor = last(await collect(s.pull(null)));
    const before = (cursor as { folders: { inbox: { uidValidity: string }; junk: { uidValidity: string } } }).folders;

    await doveadm('mailbox', 'update', '-u', user(4), '--uid-validity', String(Number(before.inbox.uidValidity) + 1000), 'INBOX');
    const inboxResync = await collect(s.pull(cursor));
    expect(inboxResync.every((b) => b.mode === 'resync')).toBe(true);
    expect(ids(inboxResync)).toEqual(inboxIds);
    const c2 = last(inboxResync);

    await withBedClient(4, async (c) => {
      await c.mailboxDelete('Junk');
      await c.mailboxCreate('Junk');
    });
    const junkIds = await append(4, 'Junk', 2);
    const junkResync = await collect(s.pull(c2));
    expect(junkResync.every((b) => b.mode === 'resync' && b.messages.every((m) => m.folder === 'junk'))).toBe(true);
    expect(ids(junkResync)).toEqual(junkIds);
    const after = (last(junkResync) as { folders: { junk: { uidValidity: string } } }).folders.junk;
    expect(after.uidValidity).not.toBe(before.junk.uidValidity);
    expect(await collect(s.pull(last(junkResync)))).toEqual([]);
  });

  it('a message over the size limit becomes a problem, not fetched, and the cursor moves past it', async () => {
    await fresh(5);
    const s = sync(5, { maxMessageBytes: 10_000 });
    const start = last(await collect(s.pull(null)));
    const [small1] = await append(5, 'INBOX', 1);
    await append(5, 'INBOX', 1, { body: 'x'.repeat(76).concat('\r\n').repeat(300) });
    const [small2] = await append(5, 'INBOX', 1);
    const batches = await collect(s.pull(start));
    expect(ids(batches)).toEqual([small1, small2]);
    const problems = batches.flatMap((b) => b.problems);
    const [uv, firstUid] = batches[0]!.messages[0]!.key.split(':').slice(1);
    expect(problems).toEqual([{ key: `INBOX:${uv}:${Number(firstUid) + 1}`, folder: 'inbox', reason: expect.stringContaining('over the 10000-byte limit') }]);
    expect(await collect(s.pull(last(batches)))).toEqual([]);
  });

  it('HIGHESTMODSEQ beyond 2^53 is kept exact', async () => {
    await fresh(10);
    const s = sync(10);
    await doveadm('mailbox', 'update', '-u', user(10), '--min-highest-modseq', '9007199254740995', 'INBOX');
    const c1 = last(await collect(s.pull(null)));
    const m1 = (c1 as { folders: { inbox: { highestModseq: string } } }).folders.inbox.highestModseq;
    expect(BigInt(m1)).toBeGreaterThanOrEqual(9007199254740995n);
    const [id] = await append(10, 'INBOX', 1);
    const b = await collect(s.pull(c1));
    expect(ids(b)).toEqual([id]);
    expect(BigInt((last(b) as { folders: { inbox: { highestModseq: string } } }).folders.inbox.highestModseq)).toBeGreaterThan(BigInt(m1));
  });

  it('IDLE: changed() fires promptly after an SMTP delivery, and the pull that follows yields it', async () => {
    await fresh(7);
    const s = sync(7);
    let cursor = last(await collect(s.pull(null)));
    let resolveChanged: () => void = () => undefined;
    const handle = await s.watch!(
      () => resolveChanged(),
      (e) => {
        throw e;
      },
    );
    const latencies: number[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const id = newId();
        const fired = new Promise<void>((r) => (resolveChanged = r));
        const t0 = performance.now();
        await inject(user(7), id);
        const accepted = performance.now();
        await fired;
        const t1 = performance.now();
        latencies.push(t1 - accepted);
        const b = await collect(s.pull(cursor));
        expect(ids(b)).toEqual([id]);
        cursor = last(b);
        console.log(`IDLE notify: SMTP 250 -> changed() ${(t1 - accepted).toFixed(1)} ms (SMTP send ${(accepted - t0).toFixed(1)} ms, pull ${(performance.now() - t1).toFixed(1)} ms)`);
      }
    } finally {
      await handle.close();
    }
    // Dovecot waits 500 ms after a change for more before it tells an idling session
    // (NOTIFY_DELAY_MSECS, lib-storage/mailbox-watch.c); Postfix's hand-over to LMTP adds its part.
    latencies.sort((a, b) => a - b);
    console.log(`IDLE notify latency over ${latencies.length}: median ${latencies[2]!.toFixed(1)} ms, max ${latencies[4]!.toFixed(1)} ms`);
    expect(latencies[4]).toBeLessThan(2_000);
  });

  it('a dead connection is reported through failed(): closed by the server, or silent (heartbeat NOOP unanswered)', async () => {
    await fresh(8);
    // Closed by the server (doveadm kick): failed() at once.
    const kicked = sync(8);
    const failedKick = new Promise<unknown>((resolve) => void kicked.watch!(() => undefined, resolve));
    await new Promise((r) => setTimeout(r, 300));
    await doveadm('kick', user(8));
    const e1 = await failedKick;
    expect(isCadenzaError(e1, 'MAILBOX_UNAVAILABLE')).toBe(true);

    // Silent: a proxy that stops forwarding without closing (a dead NAT entry).
    const proxy = await freezingProxy({ host: mailBed.host, port: mailBed.imapPort });
    try {
      const silent = sync(8, {
        account: account(8, { endpoint: { ...bedEndpoint('imap'), port: proxy.port } }),
        clock: systemClock,
        watch: { heartbeatMs: 400, heartbeatTimeoutMs: 500 },
      });
      let failedAt = 0;
      const failedSilent = new Promise<unknown>((resolve) =>
        void silent.watch!(() => undefined, (e) => {
          failedAt = performance.now();
          resolve(e);
        }),
      );
      await new Promise((r) => setTimeout(r, 1_200)); // a few healthy heartbeats first
      const frozenAt = performance.now();
      proxy.freeze();
      const e2 = await failedSilent;
      expect(isCadenzaError(e2, 'MAILBOX_UNAVAILABLE')).toBe(true);
      expect((e2 as Error).message).toMatch(/no answer to NOOP/);
      expect(failedAt - frozenAt).toBeLessThan(2_000);
    } finally {
      await proxy.close();
    }
  });

  it('watchJunk: a second IDLE on Junk, closed together', async () => {
    await fresh(9);
    const s = sync(9, { watchJunk: true });
    let fired = 0;
    const h = await s.watch!(() => fired++, (e) => {
      throw e;
    });
    await append(9, 'Junk', 1);
    for (let i = 0; i < 100 && fired === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(fired).toBeGreaterThan(0);
    await h.close();
  });
});

/** A TCP proxy to the bed that, once frozen, forwards nothing more in either direction and closes nothing. */
async function freezingProxy(target: { host: string; port: number }) {
  let frozen = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
    }
    client.on('data', (d) => !frozen && upstream.write(d));
    upstream.on('data', (d) => !frozen && client.write(d));
    client.on('close', () => !frozen && upstream.destroy());
    upstream.on('close', () => !frozen && client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    freeze: () => (frozen = true),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

