import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { startFaultProxy, type FaultProxy } from '../../../test/mail/fault-proxy.ts';
import { mailBed, resetMailBed } from '../../../test/mail/mailbed.ts';
import type { ImapAccount } from '../imap/account.ts';
import { createImapSync } from './imap-sync.ts';
import type { MailboxSync, SyncBatch, SyncCursor, WatchHandle } from './source.ts';

/**
 * The pull an IDLE push asks for runs on the watch's own connection (issue 13): against the bed's
 * Dovecot, through a TCP proxy that counts the connections, so every LOGIN is a connection the
 * proxy saw. A message delivered by SMTP (Postfix, LMTP) is pushed by IDLE, pulled on the watch
 * connection with no new connection, and IDLE resumes (the next message is pushed too); a broken
 * or stalled watch connection fails the pull and the watch. The sync role on it end to end:
 * src/ingest/worker/watch-pull.mail.test.ts. User sync77.
 */
const CONNECTOR_USER = 'sync77@inbox.test';

const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
const inject = (to: string, raw: string) => smtp.sendMail({ envelope: { from: 'prospect@example.test', to: [to] }, raw });
const plain = (to: string, id: string) => `From: prospect@example.test\r\nTo: ${to}\r\nSubject: hello\r\nMessage-ID: ${id}\r\nDate: ${new Date().toUTCString()}\r\n\r\nhello\r\n`;
const newId = () => `<${randomUUID()}@example.test>`;
const messageIdOf = (raw: Uint8Array) => /^Message-ID:\s*(\S+)/im.exec(Buffer.from(raw).toString('latin1'))?.[1] ?? '';

async function collect(it: AsyncIterable<SyncBatch>): Promise<SyncBatch[]> {
  const out: SyncBatch[] = [];
  for await (const b of it) out.push(b);
  return out;
}

/** Resolves at the next call of the returned trigger (rejects after timeoutMs). */
function signal(timeoutMs = 10_000): { fire: () => void; next: () => Promise<void> } {
  let waiters: Array<() => void> = [];
  let count = 0;
  let seen = 0;
  return {
    fire: () => {
      count++;
      for (const w of waiters.splice(0)) w();
    },
    next: () =>
      new Promise<void>((resolve, reject) => {
        if (count > seen) {
          seen = count;
          return resolve();
        }
        const t = setTimeout(() => reject(new Error(`no push within ${timeoutMs} ms`)), timeoutMs);
        waiters.push(() => {
          clearTimeout(t);
          seen = count;
          resolve();
        });
      }),
  };
}

describeMailBed('the pull an IDLE push asks for, on the watch connection (real Dovecot)', () => {
  let proxy: FaultProxy;
  const opened: MailboxSync[] = [];
  beforeAll(async () => {
    await resetMailBed([CONNECTOR_USER]);
    proxy = await startFaultProxy({ host: mailBed.host, port: mailBed.imapPort });
  }, 60_000);
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    smtp.close();
    await proxy?.close();
  });

  const account = (socketMs = 10_000): ImapAccount => ({
    endpoint: { host: proxy.host, port: proxy.port, security: 'none', allowSelfSigned: false },
    username: CONNECTOR_USER,
    auth: { kind: 'password', password: 'pass' },
    timeouts: { connectMs: 3_000, greetingMs: 3_000, socketMs },
  });

  it('pulls a pushed message on the watch connection, opens none, resumes IDLE, and keeps the Junk cursor as stored', async () => {
    const sync = createImapSync({ account: account(), random: seededRandom('watch-pull') });
    opened.push(sync);
    const first = await collect(sync.pull(null));
    const c0 = first.at(-1)!.cursor as { folders: Record<string, unknown> };
    expect(Object.keys(c0.folders).sort()).toEqual(['inbox', 'junk']);

    const pushed = signal();
    const failures: unknown[] = [];
    const watch = await sync.watch!(pushed.fire, (e) => failures.push(e));
    expect(watch.pull).toBeTypeOf('function');
    const connections = proxy.stats.connections;

    let cursor: SyncCursor = c0;
    for (let i = 0; i < 3; i++) {
      const id = newId();
      await inject(CONNECTOR_USER, plain(CONNECTOR_USER, id));
      // Each push after the first also proves IDLE was resumed after the previous pull.
      await pushed.next();
      const batches = await collect(watch.pull!(cursor));
      expect(batches.flatMap((b) => b.messages.map((m) => messageIdOf(m.raw)))).toEqual([id]);
      const next = batches.at(-1)!.cursor as { folders: Record<string, { lastUid: number; highestModseq?: string }> };
      // INBOX moved on (QRESYNC's HIGHESTMODSEQ kept); Junk is the stored one, left to the full pull.
      expect(next.folders.inbox!.lastUid).toBeGreaterThan((cursor as typeof next).folders.inbox!.lastUid);
      expect(next.folders.inbox!.highestModseq).toBeDefined();
      expect(next.folders.junk).toEqual(c0.folders.junk);
      cursor = next;
    }
    // Nothing new: an unchanged HIGHESTMODSEQ yields nothing.
    expect(await collect(watch.pull!(cursor))).toEqual([]);
    expect(proxy.stats.connections).toBe(connections);
    expect(failures).toEqual([]);

    // The full pull from that cursor finds nothing more in INBOX: the watch's pull left no gap.
    const full = await collect(sync.pull(cursor));
    expect(full.flatMap((b) => b.messages)).toEqual([]);
    await watch.close();
  }, 60_000);

  it('fails the pull and the watch when the watch connection breaks or stalls', async () => {
    const sync = createImapSync({ account: account(1_500), random: seededRandom('watch-pull-fail') });
    opened.push(sync);
    const cursor = (await collect(sync.pull(null))).at(-1)?.cursor ?? null;

    // Broken: the connection is cut under the watch.
    let failures: unknown[] = [];
    let watch: WatchHandle = await sync.watch!(() => undefined, (e) => failures.push(e));
    proxy.cut();
    await expect(collect(watch.pull!(cursor))).rejects.toSatisfy((e: unknown) => isCadenzaError(e, 'MAILBOX_UNAVAILABLE'));
    await expect.poll(() => failures.length).toBe(1);

    // Stalled: the server stops answering; the pull's own deadline (the account's socket timeout,
    // 1.5 s here, not the watch's minutes) ends it and fails the watch.
    failures = [];
    watch = await sync.watch!(() => undefined, (e) => failures.push(e));
    proxy.freeze();
    const t0 = Date.now();
    await expect(collect(watch.pull!(cursor))).rejects.toSatisfy((e: unknown) => isCadenzaError(e, 'MAILBOX_UNAVAILABLE'));
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(failures.length).toBe(1);
    proxy.cut();
  }, 60_000);
});
