/**
 * Hostile-input responsiveness: the generated hostile corpus (test/fuzz/hostile-corpus.ts,
 * about 1 MB a message, plus a 25 MB plain-text mail) through the real pipeline (the sync role's
 * prepare pool, the store) while an HTTP server in the same process answers /healthz.
 *
 *   npm run bench -- hostile-ingest [--rounds=3] [--backend=pglite|postgres] [--workers=N]
 *
 * Figures per round: event-loop delay p99 and max (perf_hooks.monitorEventLoopDelay), messages/s,
 * the slowest /healthz answer. Anchor, measured in the same run and the same way: as many ordinary
 * replies (a few KB each) through the same pipeline. Reported: median and spread (min–max) over the
 * rounds, the hostile/anchor ratios, and the load average before and after.
 */
import { loadavg } from 'node:os';
import { systemClock } from '../src/common/clock.ts';
import { seededRandom } from '../src/common/random.ts';
import { bigPlainMessage, hostileMessages } from '../test/fuzz/hostile-corpus.ts';
import { ingestResponsively, type Responsiveness } from '../test/fuzz/responsiveness.ts';
import { replyMail, seedSentSequence } from '../test/ingest/seed-sent-sequence.ts';
import { PreparePool } from '../src/ingest/worker/prepare-pool.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { flag, intFlag } from './lib/args.ts';
import { round } from './lib/format.ts';
import { median } from './lib/stats.ts';
import { benchStore } from './support/backends.ts';

function ordinary(n: number, round: number): Uint8Array[] {
  const body = 'Thanks for reaching out. We are looking at this next quarter; could you send pricing for 20 seats?\r\n\r\nBest,\r\nPat\r\n\r\nOn Mon, 30 Nov 2026 at 09:00, Rep <rep@cadenza.test> wrote:\r\n> Hi Pat,\r\n> quick question about your team.\r\n';
  return Array.from({ length: n }, (_, i) => new TextEncoder().encode(replyMail({ from: `pat${i}@prospect${i}.test`, to: 'rep@cadenza.test', subject: 'Re: quick question', body: body.repeat(3), messageId: `<anchor-${round}-${i}@prospect.test>` })));
}

const spread = (xs: number[]) => `${round(median(xs), 1)} (${round(Math.min(...xs), 1)}–${round(Math.max(...xs), 1)})`;

export default async function hostileIngest(args: string[]): Promise<Record<string, unknown>> {
  const rounds = intFlag(args, 'rounds', 3);
  const backend = flag(args, 'backend') === 'postgres' ? 'postgres' : 'pglite';
  const workers = flag(args, 'workers');
  const loadBefore = loadavg()[0]!;
  const b = await benchStore(backend);
  const random = seededRandom('hostile-bench');
  const service = new EnrollmentService({ store: b.store, clock: systemClock, random });
  const s = await seedSentSequence(b.store, { clock: systemClock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads: ['a@acme.test'], tag: 'hb' });
  const pool = new PreparePool(workers ? { size: Number(workers) } : {});
  await pool.prepare(new TextEncoder().encode('From: a@b.example\r\nSubject: warm\r\n\r\nhi\r\n'));
  const deps = { store: b.store, service, clock: systemClock, random, steps: pool.steps() };
  const mailbox = { id: s.mailboxId, workspaceId: s.workspaceId };
  const hostile: Responsiveness[] = [];
  const anchor: Responsiveness[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      // Fresh Message-IDs each round, so that every round inserts (a replay would only dedup).
      const corpus = [...hostileMessages(), bigPlainMessage()].map((m) => new TextEncoder().encode(new TextDecoder().decode(m.raw).replace(/^Message-ID: <([^>]*)>/m, `Message-ID: <r${r}-$1>`)));
      const a = await ingestResponsively(deps, mailbox, ordinary(corpus.length, r), { keyPrefix: `A:${r}:` });
      const h = await ingestResponsively(deps, mailbox, corpus, { keyPrefix: `H:${r}:` });
      anchor.push(a);
      hostile.push(h);
      console.log(`round ${r + 1}: hostile p99 ${round(h.p99Ms, 1)} ms, max ${round(h.maxMs, 1)} ms, ${round(h.messagesPerSecond, 2)} msg/s, worst /healthz ${round(h.worstAnswerMs, 0)} ms, ${h.stored} stored + ${h.quarantined} quarantined of ${h.messages} | anchor p99 ${round(a.p99Ms, 1)} ms, ${round(a.messagesPerSecond, 1)} msg/s`);
    }
  } finally {
    await pool.close();
    await b.drop();
  }
  const loadAfter = loadavg()[0]!;
  const hp99 = hostile.map((x) => x.p99Ms);
  const ap99 = anchor.map((x) => x.p99Ms);
  const hrate = hostile.map((x) => x.messagesPerSecond);
  const arate = anchor.map((x) => x.messagesPerSecond);
  console.log(`hostile (${backend}, ${pool.size} worker${pool.size > 1 ? 's' : ''}): event-loop p99 ${spread(hp99)} ms, max ${spread(hostile.map((x) => x.maxMs))} ms, ${spread(hrate)} msg/s, worst /healthz ${spread(hostile.map((x) => x.worstAnswerMs))} ms`);
  console.log(`anchor (ordinary replies): event-loop p99 ${spread(ap99)} ms, ${spread(arate)} msg/s`);
  console.log(`ratio hostile/anchor: p99 ${round(median(hp99) / median(ap99), 2)} x, throughput ${round(median(hrate) / median(arate), 3)} x; load average ${round(loadBefore, 2)} before, ${round(loadAfter, 2)} after`);
  return {
    backend,
    workers: pool.size,
    rounds,
    messages: hostile[0]?.messages ?? 0,
    hostile_p99_ms: round(median(hp99), 1),
    hostile_p99_min_ms: round(Math.min(...hp99), 1),
    hostile_p99_max_ms: round(Math.max(...hp99), 1),
    hostile_max_ms: round(median(hostile.map((x) => x.maxMs)), 1),
    hostile_msg_per_s: round(median(hrate), 2),
    hostile_worst_healthz_ms: round(median(hostile.map((x) => x.worstAnswerMs)), 0),
    anchor_p99_ms: round(median(ap99), 1),
    anchor_msg_per_s: round(median(arate), 2),
    p99_vs_anchor: round(median(hp99) / median(ap99), 2),
    throughput_vs_anchor: round(median(hrate) / median(arate), 3),
    all_ended: hostile.every((x) => x.stored + x.quarantined === x.messages),
    load_before: round(loadBefore, 2),
    load_after: round(loadAfter, 2),
  };
}
