/**
 * The IMAP connector under load: one process watching N mailboxes over IDLE on the bed's Dovecot
 * (load0001..@load.test, test/mail/mailbed.sh; one imap process per session, or hibernated
 * sessions with MAILBED_IMAP_HIBERNATE=3s), then mail delivered to random mailboxes at a steady
 * rate. It also reports Dovecot's side: its IMAP processes and their memory (PSS).
 *
 *   npm run bench -- imap-idle [--mailboxes=2000] [--messages=600] [--rate=20] [--concurrency=25] [--seed=1]
 *   (`--mailboxes 2000` works too)
 *
 * Figures:
 *   - memory per watched mailbox: RSS and JS heap (+ external) after full collections, minus the
 *     same before any connection, divided by N (the sync object, its IDLE connection and imapflow's
 *     state; the pull connections are closed by then);
 *   - per message, from its delivery (the LMTP 250 for that recipient: the message is in the
 *     mailbox) to changed() (IDLE EXISTS) and to the pull that yields it, in HDR histograms
 *     (hdr-histogram-js): p50, p99, max. Dovecot waits 500 ms after a change for more before it
 *     tells an idling session (NOTIFY_DELAY_MSECS, lib-storage/mailbox-watch.c) unless the session
 *     was hibernated (a woken session reports at once), which sets the floor of these figures.
 *     Messages whose changed() never came within 30 s are listed and counted as `lost` (a push
 *     the server never sent; the worker's poll would find them).
 *
 * The delivery → stop pipeline (parse, thread, classify, store) is bench/ingest.ts; this is the
 * connector level. Everything it opens is closed at the end, so it can run again at once; earlier
 * runs' messages stay in the load mailboxes and are skipped (first pulls look back 1 minute).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { build as buildHistogram, type Histogram } from 'hdr-histogram-js';
import nodemailer from 'nodemailer';
import { seededRandom } from '../src/common/random.ts';
import { createImapSync } from '../src/mailbox/sync/imap-sync.ts';
import type { MailboxSync, SyncCursor, WatchHandle } from '../src/mailbox/sync/source.ts';
import { bedEndpoint, mailBed, startMailBed } from '../test/mail/mailbed.ts';
import { flag, intFlag } from './lib/args.ts';
import { bytes, round } from './lib/format.ts';
import { collect, gcAvailable } from './lib/memory.ts';

const LMTP_PORT = 10024;

interface Box {
  user: string;
  sync: MailboxSync;
  cursor: SyncCursor | null;
  watch: WatchHandle | null;
  pulling: boolean;
  again: boolean;
}

interface Pending {
  user: string;
  deliveredAt: number | null;
  changedAt: number | null;
  yieldedAt: number | null;
}

/** `--name value` as well as `--name=value`. */
function normalize(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (/^--[a-z-]+$/.test(a) && i + 1 < args.length && !args[i + 1]!.startsWith('--')) out.push(`${a}=${args[++i]}`);
    else out.push(a);
  }
  return out;
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

function memory(): { rss: number; heap: number } {
  collect();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed + m.external };
}

/** Dovecot's IMAP processes and their proportional memory (PSS, Linux /proc), or null elsewhere. */
function dovecotProcesses(): { imap: number; hibernate: number; login: number; pssBytes: number } | null {
  try {
    const out = { imap: 0, hibernate: 0, login: 0, pssBytes: 0 };
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      let comm: string;
      try {
        comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        continue;
      }
      if (comm !== 'imap' && comm !== 'imap-hibernate' && comm !== 'imap-login') continue;
      out[comm === 'imap' ? 'imap' : comm === 'imap-login' ? 'login' : 'hibernate']++;
      try {
        const pss = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
        if (pss) out.pssBytes += Number(pss[1]) * 1024;
      } catch {
        // gone meanwhile
      }
    }
    return out;
  } catch {
    return null;
  }
}

const hist = (): Histogram => buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export default async function imapIdle(rawArgs: string[]): Promise<Record<string, unknown>> {
  const args = normalize(rawArgs);
  const n = intFlag(args, 'mailboxes', 2000);
  const messages = intFlag(args, 'messages', 600);
  const rate = intFlag(args, 'rate', 20);
  const concurrency = intFlag(args, 'concurrency', 25);
  const random = seededRandom(flag(args, 'seed') ?? '1');
  if (n > 2000) throw new Error('--mailboxes: the bed has 2,000 load mailboxes (MAILBED_LOAD_USERS)');
  if (!gcAvailable()) console.log('(no global.gc: memory figures are rough)');
  await startMailBed();

  const users = Array.from({ length: n }, (_, i) => `load${String(i + 1).padStart(4, '0')}@load.test`);
  const pending = new Map<string, Pending>();
  /** Messages sent to a mailbox whose changed() has not come yet. */
  const waiting = new Map<string, Pending[]>();
  const toChanged = hist();
  const toYield = hist();
  let failures = 0;
  let changedCalls = 0;

  const boxes: Box[] = users.map((user) => ({
    user,
    sync: createImapSync({
      account: { endpoint: bedEndpoint('imap'), username: user, auth: { kind: 'password', password: 'pass' }, timeouts: { connectMs: 30_000, greetingMs: 30_000, socketMs: 60_000 } },
      random: random.fork(user),
    }),
    cursor: null,
    watch: null,
    pulling: false,
    again: false,
  }));

  const pullNow = async (box: Box): Promise<void> => {
    if (box.pulling) {
      box.again = true;
      return;
    }
    box.pulling = true;
    try {
      do {
        box.again = false;
        for await (const batch of box.sync.pull(box.cursor, { resyncWindowMs: 60_000 })) {
          const now = performance.now();
          for (const m of batch.messages) {
            const id = /^Message-ID:\s*(\S+)/im.exec(Buffer.from(m.raw).toString('latin1'))?.[1];
            const p = id ? pending.get(id) : undefined;
            if (p && p.yieldedAt === null) p.yieldedAt = now;
          }
          box.cursor = batch.cursor;
        }
      } while (box.again);
    } catch (e) {
      failures++;
      console.log(`pull ${box.user} failed: ${(e as Error).message}`);
    } finally {
      box.pulling = false;
    }
  };

  const before = memory();
  const t0 = performance.now();
  // First pulls: each mailbox's cursor, as the worker would have stored it.
  await pool(boxes, concurrency, (b) => pullNow(b));
  const t1 = performance.now();
  console.log(`first pull of ${n} mailboxes: ${round((t1 - t0) / 1000, 1)} s`);

  await pool(boxes, concurrency, async (b) => {
    b.watch = await b.sync.watch!(
      () => {
        changedCalls++;
        const now = performance.now();
        for (const p of waiting.get(b.user) ?? []) if (p.changedAt === null) p.changedAt = now;
        waiting.delete(b.user);
        void pullNow(b);
      },
      (e) => {
        failures++;
        console.log(`watch ${b.user} failed: ${(e as Error).message}`);
      },
    );
  });
  const t2 = performance.now();
  console.log(`${n} IDLE watches open in ${round((t2 - t1) / 1000, 1)} s`);
  await sleep(5_000); // Dovecot hibernates them after imap_hibernate_timeout (3 s)
  const after = memory();
  const procs = dovecotProcesses();
  const rssPer = (after.rss - before.rss) / n;
  const heapPer = (after.heap - before.heap) / n;
  console.log(`memory per watched mailbox: RSS ${bytes(rssPer)}, heap+external ${bytes(heapPer)} (process RSS ${bytes(after.rss)})`);
  if (procs) console.log(`Dovecot: ${procs.imap} imap processes, ${procs.hibernate} imap-hibernate, ${procs.login} imap-login; their memory (PSS) ${bytes(procs.pssBytes)}, ${bytes(procs.pssBytes / n)} per watched mailbox`);

  // Steady delivery over LMTP, straight into Dovecot: the 250 for the recipient means "in the mailbox".
  const lmtp = nodemailer.createTransport({ host: mailBed.host, port: LMTP_PORT, lmtp: true, secure: false, ignoreTLS: true, pool: true, maxConnections: 4 } as nodemailer.TransportOptions);
  const interval = 1000 / rate;
  const sends: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < messages; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const box = boxes[random.int(0, n - 1)]!;
    const id = `<${randomUUID()}@bench.test>`;
    const p: Pending = { user: box.user, deliveredAt: null, changedAt: null, yieldedAt: null };
    pending.set(id, p);
    waiting.set(box.user, [...(waiting.get(box.user) ?? []), p]);
    const raw = `From: prospect@example.test\r\nTo: ${box.user}\r\nSubject: re: bench\r\nMessage-ID: ${id}\r\n\r\nhello\r\n`;
    sends.push(
      lmtp.sendMail({ envelope: { from: 'prospect@example.test', to: [box.user] }, raw }).then(
        () => {
          p.deliveredAt = performance.now();
        },
        (e: Error) => {
          pending.delete(id);
          console.log(`delivery to ${box.user} failed: ${e.message}`);
        },
      ),
    );
  }
  await Promise.all(sends);
  const sendSeconds = (performance.now() - start) / 1000;
  const deadline = performance.now() + 30_000;
  while ([...pending.values()].some((p) => p.yieldedAt === null) && performance.now() < deadline) await sleep(50);
  lmtp.close();

  let lost = 0;
  for (const [id, p] of pending) {
    if (p.yieldedAt === null || p.deliveredAt === null) {
      lost++;
      console.log(`not yielded: ${id} to ${p.user} (delivered: ${p.deliveredAt !== null}, changed() after it: ${p.changedAt !== null})`);
      continue;
    }
    // A pull can finish before our LMTP client reads its 250: that counts as 0.
    toYield.recordValue(Math.max(1, Math.round(p.yieldedAt - p.deliveredAt)));
    if (p.changedAt !== null) toChanged.recordValue(Math.max(1, Math.round(p.changedAt - p.deliveredAt)));
  }

  const closeStart = performance.now();
  await pool(boxes, 100, async (b) => {
    await b.watch?.close();
    await b.sync.close();
  });
  const closeMs = performance.now() - closeStart;
  for (let i = 0; i < 100 && process.getActiveResourcesInfo().includes('TCPSocketWrap'); i++) await sleep(50);
  const leftSockets = process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

  const q = (h: Histogram, p: number) => (h.totalCount ? h.getValueAtPercentile(p) : NaN);
  console.log(`delivered ${pending.size} messages at ${round(pending.size / sendSeconds, 1)}/s to ${n} mailboxes; ${lost} not yielded within 30 s; ${failures} watch/pull failures`);
  console.log(`delivery -> changed():      p50 ${q(toChanged, 50)} ms, p99 ${q(toChanged, 99)} ms, max ${toChanged.maxValue} ms (${toChanged.totalCount})`);
  console.log(`delivery -> pull yields it: p50 ${q(toYield, 50)} ms, p99 ${q(toYield, 99)} ms, max ${toYield.maxValue} ms (${toYield.totalCount})`);
  console.log(`closed everything in ${round(closeMs)} ms; sockets left open: ${leftSockets}`);

  return {
    mailboxes: n,
    messages: pending.size,
    rate_per_s: round(pending.size / sendSeconds, 1),
    open_watches_s: round((t2 - t1) / 1000, 1),
    rss_bytes_per_mailbox: Math.round(rssPer),
    heap_bytes_per_mailbox: Math.round(heapPer),
    dovecot_imap_processes: procs?.imap ?? null,
    dovecot_pss_bytes_per_mailbox: procs ? Math.round(procs.pssBytes / n) : null,
    changed_p50_ms: q(toChanged, 50),
    changed_p99_ms: q(toChanged, 99),
    changed_max_ms: toChanged.maxValue,
    yield_p50_ms: q(toYield, 50),
    yield_p99_ms: q(toYield, 99),
    yield_max_ms: toYield.maxValue,
    lost,
    failures,
    changed_calls: changedCalls,
    sockets_left: leftSockets,
  };
}
