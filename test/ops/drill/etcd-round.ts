import type { Store } from '../../../src/store/store.ts';
import { openStore } from '../../../src/store/store.ts';
import { longestGap, longestGapBetween, type CommitWatch } from './commit-watch.ts';
import { firstCommitAfter } from './verdict.ts';

/**
 * The Patroni drill's rounds whose fault is etcd's, not a database node's (three-member etcd,
 * patroni-cluster.sh's etcd-* commands), each while Cadenza's sends and the prospects' replies are
 * under way:
 *   etcd-member  SIGKILL of etcd's leader: the other two keep the quorum and elect. Expected: no
 *                Patroni failover, Cadenza's writes go on (a stall of the election at most);
 *   etcd-quorum  SIGKILL of two members for longer than Patroni's TTL, then both started again.
 *                Patroni 3.0.2 with failsafe_mode off (its default) demotes the primary once it
 *                cannot reach etcd ("demoting self because DCS is not accessible"): no node takes
 *                writes until the quorum is back and a leader is elected again. With failsafe_mode
 *                on, a primary that reaches every member's REST API keeps running.
 * Figures: whether and when the primary changed or was demoted, when a primary answered again
 * after the quorum came back, Cadenza's first commit after that, and the longest gap between
 * Cadenza's commits over the round (the write stall or outage it saw, drill/commit-watch.ts).
 */
export type EtcdFault = 'etcd-member' | 'etcd-quorum';
export const etcdFaults: readonly string[] = ['etcd-member', 'etcd-quorum'] satisfies EtcdFault[];

/** What the round needs of the cluster (patroni-drill.ts's Cluster). */
export interface EtcdDrillCluster {
  sh(...args: string[]): Promise<string>;
  /** The node answering 200 on /primary now, if any. */
  leader(): Promise<string | null>;
}

export interface EtcdRoundFigures {
  /** The member or members killed. */
  members: string;
  primaryBefore: string;
  /** The primary at the round's end (after the quorum came back, for etcd-quorum). */
  primaryAfter: string | null;
  /** Another node answered as primary at some point of the round. */
  primaryChanged: boolean;
  /** Fault → no node answers 200 on /primary (Patroni demoted the primary); null if never. */
  demotedMs: number | null;
  /** etcd-member: fault → etcd has a leader again (seen from the members' status). */
  etcdLeaderMs: number | null;
  /** etcd-quorum: how long two members were down. */
  quorumLostMs: number | null;
  /** etcd-quorum: quorum back (etcd healthy) → a node answers 200 on /primary. */
  primaryAfterRestoreMs: number | null;
  /** etcd-quorum: quorum back → Cadenza's first commit. */
  commitAfterRestoreMs: number | null;
  /** The longest gap between Cadenza's commits from the fault to the round's end. */
  stallMs: number;
  /** The longest gap between two commits within the 20 s before the fault: Cadenza's own pace, for
   * scale (in a first round, those 20 s may include Cadenza's start). */
  baselineGapMs: number;
}

export interface EtcdRoundResult {
  faultAt: number;
  /** Fault → Cadenza's first commit after it (etcd-quorum: after the quorum came back). */
  resumeMs: number | null;
  /** Fault → another node answers as primary; null when none did (the expected case). */
  promotedMs: number | null;
  figures: EtcdRoundFigures;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runEtcdRound(
  fault: EtcdFault,
  o: { cluster: EtcdDrillCluster; primary: string; ttl: number; holdMs?: number; commits: CommitWatch; log: (line: string) => void },
): Promise<EtcdRoundResult> {
  const { cluster, primary, log } = o;
  // By default longer than the leader key's TTL (and so than retry_timeout): long enough for
  // Patroni to act, shorter than Cadenza's wait for a writable host (30 s).
  const holdMs = o.holdMs ?? (o.ttl + 8) * 1_000;
  let members: string;
  if (fault === 'etcd-member') {
    members = await cluster.sh('etcd-leader');
    await cluster.sh('etcd-kill', members);
  } else {
    members = (await cluster.sh('etcd-quorum-lose')).replace(/ killed.*$/, '');
  }
  const faultAt = Date.now();
  log(`${fault}: ${members} killed (etcd's leader first), ${primary} primary`);

  let demotedMs: number | null = null;
  let promotedMs: number | null = null;
  let etcdLeaderMs: number | null = null;
  let primaryChanged = false;
  const watchPrimary = async () => {
    const now = await cluster.leader();
    if (now === null && demotedMs === null) {
      demotedMs = Date.now() - faultAt;
      log(`${fault}: no node answers as primary ${demotedMs} ms after the fault (Patroni demoted ${primary})`);
    }
    if (now !== null && now !== primary && !primaryChanged) {
      primaryChanged = true;
      promotedMs = Date.now() - faultAt;
      log(`${fault}: ${now} answers as primary ${promotedMs} ms after the fault`);
    }
    return now;
  };
  while (Date.now() < faultAt + holdMs) {
    await watchPrimary();
    if (fault === 'etcd-member' && etcdLeaderMs === null) {
      const lead = await cluster.sh('etcd-leader').catch(() => null);
      if (lead) {
        etcdLeaderMs = Date.now() - faultAt;
        log(`${fault}: etcd's leader is ${lead} ${etcdLeaderMs} ms after the fault`);
      }
    }
    await sleep(200);
  }

  let quorumLostMs: number | null = null;
  let restoredAt = faultAt;
  if (fault === 'etcd-quorum') {
    await cluster.sh('etcd-quorum-restore');
    restoredAt = Date.now();
    quorumLostMs = restoredAt - faultAt;
    log(`${fault}: quorum back after ${quorumLostMs} ms`);
  } else {
    await cluster.sh('etcd-heal', members);
  }

  // A primary again (etcd-quorum without failsafe: the race for the leader key, then a promotion).
  let primaryAfter: string | null = null;
  let primaryAfterRestoreMs: number | null = null;
  const until = Date.now() + 120_000;
  while (Date.now() < until && primaryAfter === null) {
    primaryAfter = await watchPrimary();
    if (primaryAfter === null) await sleep(100);
  }
  if (primaryAfter !== null && fault === 'etcd-quorum') {
    primaryAfterRestoreMs = Date.now() - restoredAt;
    log(`${fault}: ${primaryAfter} primary ${primaryAfterRestoreMs} ms after the quorum came back`);
  }

  // Cadenza's first commit after the fault (etcd-quorum: after the quorum came back), read on the
  // primary itself, by commit timestamp.
  let resumeAt: number | null = null;
  if (primaryAfter !== null) {
    let on: Store | null = null;
    try {
      on = await openStore({ databaseUrl: await cluster.sh('url-of', primaryAfter), poolSize: 1 });
      while (Date.now() < until && resumeAt === null) {
        resumeAt = await firstCommitAfter(on, restoredAt).catch(() => null);
        if (resumeAt === null) await sleep(100);
      }
    } finally {
      await on?.close().catch(() => undefined);
    }
  }
  const commitAfterRestoreMs = fault === 'etcd-quorum' && resumeAt !== null ? resumeAt - restoredAt : null;
  // Let the watch see that commit before the gaps are measured.
  await sleep(500);
  const commits = o.commits.commits();
  const stall = longestGap(commits, faultAt, Date.now());
  const baselineGapMs = longestGapBetween(commits, faultAt - 20_000, faultAt);
  log(`${fault}: longest gap between Cadenza's commits ${stall.gapMs} ms (the 20 s before: ${baselineGapMs} ms)`);
  return {
    faultAt,
    resumeMs: resumeAt === null ? null : resumeAt - faultAt,
    promotedMs,
    figures: { members, primaryBefore: primary, primaryAfter, primaryChanged, demotedMs, etcdLeaderMs, quorumLostMs, primaryAfterRestoreMs, commitAfterRestoreMs, stallMs: stall.gapMs, baselineGapMs },
  };
}
