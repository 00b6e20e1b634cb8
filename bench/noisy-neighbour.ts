/**
 * The noisy neighbour (issue 15, "Scale-out and isolation"): one workspace connects many Gmail
 * mailboxes with full inboxes at once, and another workspace's replies are timed from delivery to
 * the stop committed while the first syncs flood the sync role (test/ops/noisy-neighbour.ts: the
 * production SyncPool, GmailSync on the emulator, push over loopback, PostgreSQL).
 *
 *   npm run bench -- noisy-neighbour [--noisy=300] [--history=40] [--replies=16] [--gap-ms=250] [--rounds=3] [--connect=8] [--backend=postgres]
 *
 * Cases, interleaved round by round (bench/lib/rounds.ts): `quiet` (the same replies, no flood:
 * the anchor) and `flood`. Each round reports the quiet workspace's reply-to-stop p50 and max and
 * the flood's size and duration; the ratio flood/quiet of the p50 is taken round by round.
 */
import { describeLoad, interleavedRounds, loadFigures, machineLoad, showSpread, spreadFigures } from './lib/rounds.ts';
import { flag, intFlag } from './lib/args.ts';
import { percentile } from './lib/stats.ts';
import { benchStore } from './support/backends.ts';
import { runNoisyNeighbour } from '../test/ops/noisy-neighbour.ts';

export default async function noisyNeighbour(args: string[]): Promise<Record<string, unknown>> {
  const noisy = intFlag(args, 'noisy', 300);
  const history = intFlag(args, 'history', 40);
  const replies = intFlag(args, 'replies', 16);
  const gapMs = intFlag(args, 'gap-ms', 250);
  const rounds = intFlag(args, 'rounds', 3);
  const connect = intFlag(args, 'connect', 8);
  const backend = (flag(args, 'backend') ?? 'postgres') as 'postgres' | 'pglite';
  const before = machineLoad();
  console.log(`noisy neighbour: ${noisy} mailboxes x ${history} messages flooding; ${replies} quiet replies every ${gapMs} ms; connect gate ${connect}; ${backend}; ${describeLoad(before)}`);
  const r = await interleavedRounds({
    rounds,
    cases: ['quiet', 'flood'] as const,
    warmup: false,
    run: async (c, round) => {
      const s = await benchStore(backend);
      try {
        const x = await runNoisyNeighbour({ store: s.store, noisyMailboxes: c === 'flood' ? noisy : 0, historyPerMailbox: history, replies, replyGapMs: gapMs, connectConcurrency: connect });
        if (!x.allStopped) throw new Error(`round ${round} ${c}: a replied enrollment did not stop`);
        const f = { ready_ms: x.quietReadyMs, p50_ms: percentile(x.replyToStopMs, 50), p99_ms: percentile(x.replyToStopMs, 99), max_ms: Math.max(...x.replyToStopMs), during_flood: x.repliesDuringFlood, flood_messages: x.floodIngested, flood_ms: x.floodMs, msgs_per_s: x.floodMs > 0 ? (x.floodIngested / x.floodMs) * 1000 : 0 };
        console.log(`  round ${round} ${c.padEnd(5)}: quiet mailbox synced after ${f.ready_ms} ms; reply-to-stop p50 ${f.p50_ms.toFixed(0)} ms, p99 ${f.p99_ms.toFixed(0)} ms, max ${f.max_ms} ms` + (c === 'flood' ? `; ${f.during_flood}/${replies} replies during the flood of ${f.flood_messages} messages (${(f.flood_ms / 1000).toFixed(1)} s, ${f.msgs_per_s.toFixed(0)} msg/s)` : ''));
        return f;
      } finally {
        await s.drop();
      }
    },
  });
  const after = machineLoad();
  console.log(`quiet workspace reply-to-stop p99, no flood: ${showSpread(r.spread('quiet', 'p99_ms'))} ms; during the flood: ${showSpread(r.spread('flood', 'p99_ms'))} ms`);
  console.log(`quiet mailbox's first sync done after, no flood: ${showSpread(r.spread('quiet', 'ready_ms'))} ms; during the flood: ${showSpread(r.spread('flood', 'ready_ms'))} ms`);
  console.log(`p50 during the flood / p50 without: ${showSpread(r.ratio('flood', 'quiet', 'p50_ms'))}`);
  console.log(`load after: ${describeLoad(after)}`);
  return {
    noisy_mailboxes: noisy,
    history_per_mailbox: history,
    replies,
    ...spreadFigures('quiet_p99_ms', r.spread('quiet', 'p99_ms'), 0),
    ...spreadFigures('flood_p99_ms', r.spread('flood', 'p99_ms'), 0),
    ...spreadFigures('quiet_ready_ms', r.spread('quiet', 'ready_ms'), 0),
    ...spreadFigures('flood_ready_ms', r.spread('flood', 'ready_ms'), 0),
    ...spreadFigures('flood_p50_ratio', r.ratio('flood', 'quiet', 'p50_ms'), 2),
    ...spreadFigures('flood_msgs_per_s', r.spread('flood', 'msgs_per_s'), 0),
    ...loadFigures(before, after),
  };
}
