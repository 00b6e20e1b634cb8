/**
 * Ingestion throughput: how many inbound messages a second one process turns into durable signals.
 *
 *   npm run bench -- ingest [--replies=1000] [--batch=100] [--backends=pglite,postgres]
 *
 * Input: every mail of the corpora (../shared/corpora: bounces, auto-replies, ARF reports) and
 * `--replies` generated replies, each answering one of as many sends recorded beforehand (so each
 * reply threads, acts and stops an enrollment, the expensive path). Two figures:
 *
 *   cpu:   parse (parseMailSafe) + new text + classify (the ladder, no LLM), in memory
 *   store: the whole pipeline (ingestBatch): the CPU stages, then threading, the decision, the
 *          inbound rows, the engine events and the cursor in one transaction per batch
 *
 * The mail comes from memory, not from a server: the IMAP connector is measured by imap-idle.
 *
 * With `--mailboxes=N` (or `--mailboxes N`), also reply-to-stop under load, on PostgreSQL and the
 * mail bed: one SyncPool watching N load mailboxes (load0001..@load.test) over IDLE plus one
 * mailbox with recorded sends (sync14@inbox.test); `--stop-replies` replies (default 30) are
 * injected by SMTP one after the other, each timed from just before the injection to the commit of
 * its enrollment's stop. Memory per watched mailbox is RSS and heap after full collections, minus
 * the same before the pool started, over N + 1.
 */
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { build as buildHistogram } from 'hdr-histogram-js';
import nodemailer from 'nodemailer';
import { systemClock } from '../src/common/clock.ts';
import { newId } from '../src/common/ids.ts';
import { SyncPool } from '../src/ingest/worker/sync-pool.ts';
import { localKeyWrapper, Vault } from '../src/mailbox/vault.ts';
import { bedEndpoint, mailBed, resetMailBed, startMailBed } from '../test/mail/mailbed.ts';
import { collect } from './lib/memory.ts';
import { seededRandom } from '../src/common/random.ts';
import { defaultIngestSteps } from '../src/ingest/pipeline-steps.ts';
import { ingestBatch } from '../src/ingest/pipeline.ts';
import { replyMail, seedSentSequence } from '../test/ingest/seed-sent-sequence.ts';
import type { FetchedMessage } from '../src/mailbox/sync/source.ts';
import { Metrics } from '../src/ops/metrics.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { flag, intFlag } from './lib/args.ts';
import { bytes, int, round } from './lib/format.ts';
import { benchStore } from './support/backends.ts';

const here = dirname(fileURLToPath(import.meta.url));
const corpora = resolve(here, '..', '..', 'shared', 'corpora');

function corpusMail(): Uint8Array[] {
  if (!existsSync(corpora)) {
    console.log(`corpora not found (../shared/corpora): generated replies only`);
    return [];
  }
  const out: Uint8Array[] = [];
  const walk = (dir: string) => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.eml')) out.push(new Uint8Array(readFileSync(p)));
    }
  };
  for (const set of ['sisimai', 'bounceparser', 'autoreply-ext', 'replyparse']) if (existsSync(join(corpora, set))) walk(join(corpora, set));
  return out;
}

export default async function ingest(args: string[]): Promise<Record<string, unknown>> {
  const replies = intFlag(args, 'replies', 1000);
  const batchSize = intFlag(args, 'batch', 100);
  const backends = (flag(args, 'backends') ?? 'pglite,postgres').split(',').filter((b): b is 'pglite' | 'postgres' => b === 'pglite' || b === 'postgres');
  const corpus = corpusMail();
  const steps = defaultIngestSteps();
  const figures: Record<string, unknown> = { corpus_messages: corpus.length, replies, batch: batchSize };

  // CPU only, over the corpora and as many generated replies.
  const sample = [...corpus, ...Array.from({ length: replies }, (_, i) => new TextEncoder().encode(replyMail({ from: `p${i}@acme.test`, to: 'rep@cadenza.test', inReplyTo: `<s${i}@cadenza.test>`, subject: 'Re: Quick question', body: `Thanks, let's talk.\n\nOn Monday, rep wrote:\n> Hi ${i}`, messageId: `<g${i}@acme.test>` })))];
  for (let warm = 0; warm < 2; warm++) {
    const t0 = performance.now();
    let parsed = 0;
    for (const raw of sample) {
      const r = await steps.parse(raw);
      if (!r.ok) continue;
      parsed++;
      await steps.classify(r.mail, steps.newText(r.mail));
    }
    const ms = performance.now() - t0;
    if (warm === 1) {
      figures.cpu_msgs_per_s = Math.round((sample.length / ms) * 1000);
      figures.cpu_us_per_msg = round((ms * 1000) / sample.length);
      console.log(`cpu (parse + new text + classify): ${int(sample.length)} messages (${parsed} parsed) in ${round(ms)} ms: ${int((sample.length / ms) * 1000)} msg/s`);
    }
  }

  for (const backend of backends) {
    const b = await benchStore(backend);
    try {
      const random = seededRandom(`bench-ingest-${backend}`);
      const service = new EnrollmentService({ store: b.store, clock: systemClock, random });
      const seedStart = performance.now();
      const leads = Array.from({ length: replies }, (_, i) => `p${i}@acme${i % 50}.test`);
      const s = await seedSentSequence(b.store, { clock: systemClock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads, tag: 'bench' });
      console.log(`${backend}: seeded ${int(s.sends.length)} sent enrollments in ${round((performance.now() - seedStart) / 1000)} s`);
      const messages: FetchedMessage[] = corpus.map((raw, i) => ({ key: `INBOX:1:c${i}`, folder: 'inbox', raw, threadId: null, receivedAt: Date.now() }));
      s.sends.forEach((x, i) =>
        messages.push({
          key: `INBOX:1:r${i}`,
          folder: 'inbox',
          raw: new TextEncoder().encode(replyMail({ from: x.leadEmail, to: 'rep@cadenza.test', inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: `Thanks, let's talk.\n\nOn Monday, rep wrote:\n> Hi`, messageId: `<r${i}@bench.test>` })),
          threadId: null,
          receivedAt: Date.now(),
        }),
      );
      // Interleave corpus mail and replies as a real inbox would.
      messages.sort((a, b2) => (a.key < b2.key ? -1 : 1));
      const metrics = new Metrics();
      const deps = { store: b.store, service, clock: systemClock, random, steps, metrics };
      const t0 = performance.now();
      let acted = 0;
      for (let i = 0; i < messages.length; i += batchSize) {
        const r = await ingestBatch(deps, { id: s.mailboxId, workspaceId: s.workspaceId }, { messages: messages.slice(i, i + batchSize), problems: [], cursor: { n: i }, mode: 'incremental' });
        acted += r.messages.filter((m) => m.action !== 'inbox' && m.action !== 'own').length;
      }
      const ms = performance.now() - t0;
      const rate = Math.round((messages.length / ms) * 1000);
      figures[`${backend}_msgs_per_s`] = rate;
      figures[`${backend}_acted`] = acted;
      console.log(`${backend}: pipeline (cpu + thread + act + store), ${int(messages.length)} messages in batches of ${batchSize}: ${round(ms)} ms, ${int(rate)} msg/s; ${int(acted)} acted on an enrollment`);
    } finally {
      await b.drop();
    }
  }
  const n = mailboxesFlag(args);
  if (n > 0) Object.assign(figures, await underLoad(n, intFlag(args, 'stop-replies', 30)));
  return figures;
}

function mailboxesFlag(args: string[]): number {
  const i = args.indexOf('--mailboxes');
  if (i >= 0 && args[i + 1] && !args[i + 1]!.startsWith('--')) return intFlag([`--mailboxes=${args[i + 1]}`], 'mailboxes', 0);
  return flag(args, 'mailboxes') === undefined ? 0 : intFlag(args, 'mailboxes', 0);
}

async function underLoad(n: number, replies: number): Promise<Record<string, unknown>> {
  await startMailBed();
  const HOT = 'sync14@inbox.test';
  await resetMailBed([HOT]);
  const b = await benchStore('postgres');
  const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
  try {
    const store = b.store;
    const random = seededRandom('bench-ingest-load');
    const vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    const service = new EnrollmentService({ store, clock: systemClock, random });
    const tag = randomBytes(3).toString('hex');
    const s = await seedSentSequence(store, { clock: systemClock, random, service }, {
      mailboxEmail: HOT,
      leads: Array.from({ length: replies }, (_, i) => `l${i}.${tag}@prospects.test`),
      tag,
      settings: { imap: bedEndpoint('imap') },
      credential: { vault, username: HOT, password: 'pass' },
    });
    const ws = newId(Date.now(), random);
    await store.db.insertInto('workspace').values({ id: ws, name: 'load' }).execute();
    const ids = [s.mailboxId];
    for (let i = 1; i <= n; i++) {
      const id = newId(Date.now(), random);
      const user = `load${String(i).padStart(4, '0')}@load.test`;
      await store.db.insertInto('mailbox').values({ id, workspace_id: ws, email: user, provider: 'smtp_imap', settings: JSON.stringify({ imap: bedEndpoint('imap') }) }).execute();
      await vault.put(ws, id, { kind: 'password', username: user, password: 'pass' });
      ids.push(id);
    }
    collect();
    const before = process.memoryUsage();
    const stops = new Map<string, (at: number) => void>();
    const metrics = new Metrics();
    const pool = new SyncPool({
      metrics,
      store,
      service,
      clock: systemClock,
      random,
      vault,
      mailboxIds: ids,
      // Earlier runs' mail in the load mailboxes is not this run's business.
      resyncWindowMs: 60_000,
      leaseTtlMs: 120_000,
      onBatch: (_mb, r) => {
        const at = Date.now();
        for (const m of r.messages) stops.get(m.messageId)?.(at);
      },
    });
    const t0 = Date.now();
    await pool.start();
    const synced = async () => Number((await store.db.selectFrom('mailbox_sync').select((eb) => eb.fn.countAll<number>().as('c')).where('cursor', 'is not', null).executeTakeFirstOrThrow()).c);
    while ((await synced()) < ids.length && Date.now() - t0 < 600_000) await new Promise((r) => setTimeout(r, 500));
    const readyS = (Date.now() - t0) / 1000;
    console.log(`load: ${int(pool.mailboxes.length)} mailboxes owned, ${int(await synced())} with a cursor after ${round(readyS)} s`);
    await new Promise((r) => setTimeout(r, 5_000));
    collect();
    const after = process.memoryUsage();
    const perRss = (after.rss - before.rss) / ids.length;
    const perHeap = (after.heapUsed + after.external - before.heapUsed - before.external) / ids.length;
    console.log(`load: memory per watched mailbox: rss ${bytes(perRss)}, heap+external ${bytes(perHeap)}`);
    const h = buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
    let missed = 0;
    const slow: string[] = [];
    for (let i = 0; i < s.sends.length; i++) {
      const x = s.sends[i]!;
      const messageId = `<load-${i}-${tag}@prospects.test>`;
      const seen = new Promise<number | null>((resolve) => {
        const t = setTimeout(() => resolve(null), 30_000);
        stops.set(messageId, (at) => {
          clearTimeout(t);
          resolve(at);
        });
      });
      const start = Date.now();
      await smtp.sendMail({ envelope: { from: x.leadEmail, to: [HOT] }, raw: replyMail({ from: x.leadEmail, to: HOT, inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Thanks, call me.', messageId }) });
      const at = await seen;
      if (at === null) missed++;
      else h.recordValue(Math.max(1, at - start));
      if (at === null || at - start > 2_000) slow.push(`#${i} ${at === null ? 'missed' : `${at - start} ms`}`);
    }
    const errors = (await metrics.syncErrors.get()).values.reduce((a, v) => a + v.value, 0);
    const hot = await store.db.selectFrom('mailbox_sync').select(['last_error', 'last_error_at']).where('mailbox_id', '=', s.mailboxId).executeTakeFirst();
    console.log(`load: sync errors during the run ${errors}; the measured mailbox's last error: ${hot?.last_error ?? 'none'}${slow.length ? `; slow: ${slow.join(', ')}` : ''}`);
    await pool.stop();
    const fig = { p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99), max: h.maxValue };
    console.log(`load: reply-to-stop with ${int(n)} watched load mailboxes, n=${h.totalCount} (missed ${missed}): p50 ${fig.p50} ms, p99 ${fig.p99} ms, max ${fig.max} ms`);
    return {
      load_mailboxes: n,
      load_ready_s: round(readyS),
      load_rss_bytes_per_mailbox: Math.round(perRss),
      load_heap_bytes_per_mailbox: Math.round(perHeap),
      load_replies: h.totalCount,
      load_missed: missed,
      load_sync_errors: errors,
      load_stop_p50_ms: fig.p50,
      load_stop_p99_ms: fig.p99,
      load_stop_max_ms: fig.max,
    };
  } finally {
    smtp.close();
    await b.drop();
  }
}
