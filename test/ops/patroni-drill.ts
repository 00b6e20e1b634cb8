import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { migrate } from '../../src/store/migrate.ts';
import { openStore, type Store } from '../../src/store/store.ts';
import { retryTransient } from '../../src/store/transient.ts';
import { systemClock } from '../../src/common/clock.ts';
import { resetMailBed } from '../mail/mailbed.ts';
import { startCadenza, type CadenzaChild } from './drill/cadenza-child.ts';
import { startProspectReplies, type ProspectReplies } from './drill/prospect-replies.ts';
import { bedUser, seedDrill } from './drill/seed.ts';
import { checkDeliveries, drillRequests, firstCommitAfter, settledStates, type DrillRequest } from './drill/verdict.ts';
import { watchCommits, type CommitWatch } from './drill/commit-watch.ts';
import { etcdFaults, runEtcdRound, type EtcdFault, type EtcdRoundFigures } from './drill/etcd-round.ts';

/**
 * The automatic-failover drill (docs/operations.md, "Automatic failover with Patroni"): a Patroni
 * cluster (patroni-cluster.sh: two or three PostgreSQL nodes with synchronous_mode, each node in a
 * network namespace of its own, and etcd: one beside Cadenza for two nodes, a member on each node
 * for three), `cadenza start --roles scheduler,sender,sync` on the multi-host URL, sends under way
 * on the mail bed and the prospects replying to what they receive, then one fault per round,
 * nobody promoting by hand:
 *   kill     SIGKILL of the primary's Patroni and postmaster (and etcd member): a crashed machine;
 *   cut      the primary's link down: packets dropped, connections hang instead of failing;
 *   isolate  (three nodes) the primary loses the other nodes and etcd's quorum but not Cadenza:
 *            it keeps its clients' connections until Patroni demotes it (its commits wait on the
 *            synchronous standby it cannot reach), while the others elect and promote;
 *   etcd-member, etcd-quorum  (three nodes) etcd's own faults, no database node touched: its
 *            leader killed, or two of its three members for longer than the TTL (drill/etcd-round.ts;
 *            `failsafe` runs the cluster with Patroni's failsafe_mode).
 * Between rounds the faulty node comes back (heal) and rejoins as the synchronous standby.
 *
 * Verdict: the checks of drill/verdict.ts (no step sent twice, none forgotten, all settled), and
 * for the replies: every reply sent during the drill is stored, its enrollment stopped, and no
 * follow-up went out after it. Figures per round: fault → Patroni's promotion, fault → Cadenza's
 * first commit on the new primary (resume).
 *
 * Mail-bed users: sync67–70 and 72–75 send (the server files the Sent copy), the prospects are
 * plus-addresses of sync79, 80, 86, 87; the drill empties their folders first.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const clusterScript = join(root, 'test', 'ops', 'patroni-cluster.sh');
const run = promisify(execFile);
const SENDERS = [67, 68, 69, 70, 72, 73, 74, 75];
const PROSPECTS = [79, 80, 86, 87];

export type Fault = 'kill' | 'cut' | 'isolate' | EtcdFault;
const faults: readonly string[] = ['kill', 'cut', 'isolate', ...etcdFaults];

/** DRILL_FAULTS, checked: a misspelt fault is an error, not a round the cluster script refuses midway. */
export function parseFaults(list: string): Fault[] {
  const out = list.split(',').map((f) => f.trim()).filter((f) => f !== '');
  const bad = out.filter((f) => !faults.includes(f));
  if (bad.length > 0 || out.length === 0) throw new Error(`DRILL_FAULTS: unknown fault(s) ${bad.join(', ') || '(none given)'}; known: ${faults.join(', ')}`);
  return out as Fault[];
}

export interface PatroniDrillOptions {
  /** 1..8 sending mailboxes. */
  mailboxes: number;
  leadsPerMailbox: number;
  /** One round per fault, in order. */
  faults: Fault[];
  /** The follow-up's delay in minutes; the drill waits past it when waitForFollowUps. */
  followUpMinutes: number;
  waitForFollowUps: boolean;
  clusterDir: string;
  /** Patroni's leader TTL (s): how long a dead primary holds its place. */
  ttl: number;
  /** 2 (one etcd beside Cadenza) or 3 (a three-member etcd apart; needed by `isolate` and the etcd faults). */
  nodes?: 2 | 3;
  /** Patroni's failsafe_mode (patroni-cluster.sh's PATRONI_FAILSAFE). */
  failsafe?: boolean;
  /** How long an etcd round keeps its members down (s); default the TTL + 8. */
  etcdHoldS?: number;
  log?: (line: string) => void;
}

export interface RoundReport {
  fault: Fault;
  node: string;
  sentBefore: number;
  inFlight: number;
  /** Fault → another node answers as primary (Patroni promoted it). */
  promotedMs: number | null;
  /** Fault → Cadenza's first commit on the new primary. */
  resumeMs: number | null;
  /** Replies sent by prospects from 10 s before the fault to the resume. */
  repliesAround: number;
  /** etcd's faults: what Patroni did and the write stall Cadenza saw. */
  etcd?: EtcdRoundFigures;
}

export interface PatroniDrillReport {
  sends: number;
  rounds: RoundReport[];
  replies: number;
  /** Last fault → every request settled and every reply stored. */
  settledMs: number;
  duplicates: string[];
  forgotten: string[];
  unsettled: string[];
  lostReplies: string[];
  notStopped: string[];
  followUpsAfterReply: string[];
  output: string;
}

export async function patroniTools(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'the Patroni drill needs root (network namespaces)';
  try {
    await run('bash', ['-c', 'command -v patroni && command -v etcd && command -v ip && command -v curl && (command -v pg_ctl || test -x "$(pg_config --bindir)/pg_ctl")']);
  } catch {
    return 'patroni, etcd, ip (iproute2), curl or the PostgreSQL server binaries are not installed';
  }
  // A container may run as root without the right to make network namespaces (CAP_SYS_ADMIN).
  const probe = `czprobe${process.pid}`;
  try {
    await run('ip', ['netns', 'add', probe]);
    await run('ip', ['netns', 'del', probe]);
    return null;
  } catch (e) {
    return `this machine does not allow network namespaces (ip netns add: ${(e as { stderr?: string }).stderr?.trim() || String(e)})`;
  }
}

function positiveSeconds(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a number of seconds above 0, not '${value}'`);
  return n;
}

const stamp = () => new Date().toISOString().slice(11, 23);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Cluster {
  constructor(private readonly env: NodeJS.ProcessEnv) {}
  async sh(...args: string[]): Promise<string> {
    return (await run(clusterScript, args, { env: this.env, maxBuffer: 1 << 20 })).stdout.trim();
  }
  /** Each node's name and REST URL. */
  async nodes(): Promise<Array<{ name: string; rest: string }>> {
    return (await this.sh('nodes')).split('\n').map((l) => {
      const [name, , rest] = l.split(' ');
      return { name: name!, rest: rest! };
    });
  }
  /** The node whose Patroni answers 200 on /primary now, if any (each asked with a short timeout). */
  async leader(nodes: Array<{ name: string; rest: string }>): Promise<string | null> {
    const answers = await Promise.all(
      nodes.map((n) =>
        fetch(`${n.rest}/primary`, { signal: AbortSignal.timeout(700) })
          .then((r) => (r.status === 200 ? n.name : null))
          .catch(() => null),
      ),
    );
    return answers.find((a) => a !== null) ?? null;
  }
}

export async function runPatroniDrill(o: PatroniDrillOptions): Promise<PatroniDrillReport> {
  const log = (line: string) => o.log?.(`${stamp()} ${line}`);
  const needsThree = o.faults.some((f) => f === 'isolate' || etcdFaults.includes(f));
  const nodeCount = o.nodes ?? (needsThree ? 3 : 2);
  if (needsThree && nodeCount !== 3) throw new Error(`faults ${o.faults.join(',')} need three nodes (a three-member etcd)`);
  const cluster = new Cluster({ ...process.env, PATRONI_DIR: o.clusterDir, PATRONI_TTL: String(o.ttl), PATRONI_NODES: String(nodeCount), PATRONI_FAILSAFE: o.failsafe ? '1' : '0' });
  log(`cluster: fresh ${nodeCount === 3 ? 'three-member etcd' : 'etcd'} + ${nodeCount} Patroni nodes (synchronous_mode${o.failsafe ? ', failsafe_mode' : ''})`);
  await cluster.sh('destroy');
  await cluster.sh('start');
  const url = await cluster.sh('url');
  log('cluster: a leader and its synchronous standby');
  const nodes = await cluster.nodes();
  const senders = SENDERS.slice(0, o.mailboxes);
  await resetMailBed([...senders, ...PROSPECTS].map(bedUser));
  const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-patroni-drill-'));
  let store: Store | null = null;
  let cadenza: CadenzaChild | null = null;
  let prospects: ProspectReplies | null = null;
  let commits: CommitWatch | null = null;
  try {
    store = await openStore({ databaseUrl: url, poolSize: 4, failoverWaitMs: 120_000 });
    await migrate(store);
    const seed = await seedDrill(store, { senders, prospects: PROSPECTS, leadsPerMailbox: o.leadsPerMailbox, followUpAfter: `${o.followUpMinutes} minutes` });
    prospects = await startProspectReplies({ prospects: PROSPECTS, tag: seed.tag });
    log(`cadenza: start --roles scheduler,sender,sync on ${url}`);
    cadenza = startCadenza({ databaseUrl: url, roles: ['scheduler', 'sender', 'sync'], master: seed.master, dataDir });
    if (o.faults.some((f) => etcdFaults.includes(f))) {
      commits = watchCommits(await Promise.all(nodes.map((n) => cluster.sh('url-of', n.name))));
    }
    const firstSteps = (rs: DrillRequest[]) => rs.filter((r) => r.step_key === 'intro');

    const rounds: RoundReport[] = [];
    const sentBeforeAll = new Set<string>();
    let lastFaultAt = Date.now();
    for (const [i, fault] of o.faults.entries()) {
      // Each fault comes while sends are under way: round i once i/(rounds+1) of them are recorded.
      const threshold = Math.max(1, Math.floor(((i + 1) * seed.sends) / (o.faults.length + 1)));
      const until = Date.now() + 150_000;
      let before = firstSteps(await drillRequests(store));
      while (before.filter((r) => r.state === 'sent').length < threshold) {
        if (Date.now() > until) throw new Error(`round ${i + 1}: fewer than ${threshold} sends within 150 s:\n${cadenza.output()}`);
        await sleep(50);
        before = firstSteps(await drillRequests(store));
      }
      const node = await cluster.leader(nodes);
      if (!node) throw new Error(`round ${i + 1}: no primary to fault`);
      const sentBefore = before.filter((r) => r.state === 'sent').map((r) => r.id);
      for (const id of sentBefore) sentBeforeAll.add(id);
      const inFlightAt = before.filter((r) => r.state === 'in_flight').length;
      if (fault === 'etcd-member' || fault === 'etcd-quorum') {
        log(`round ${i + 1}: ${fault} with ${sentBefore.length} of ${seed.sends} sent (${inFlightAt} in flight)`);
        // The killed members come back within the round: the next one starts on a whole etcd.
        const e = await runEtcdRound(fault, { cluster: { sh: (...a) => cluster.sh(...a), leader: () => cluster.leader(nodes) }, primary: node, ttl: o.ttl, ...(o.etcdHoldS ? { holdMs: o.etcdHoldS * 1_000 } : {}), commits: commits!, log: (l) => log(`round ${i + 1}: ${l}`) });
        lastFaultAt = e.faultAt;
        const repliesAround = prospects.replies.filter((r) => r.at >= e.faultAt - 10_000 && r.at <= e.faultAt + (e.resumeMs ?? 0)).length;
        rounds.push({ fault, node, sentBefore: sentBefore.length, inFlight: inFlightAt, promotedMs: e.promotedMs, resumeMs: e.resumeMs, repliesAround, etcd: e.figures });
        await cluster.sh('wait');
        continue;
      }
      await cluster.sh(fault, node);
      // The fault is complete once the script returns (the processes gone, the link down): commits
      // on the old primary until then are replicated, so the clock starts here.
      const faultAt = Date.now();
      lastFaultAt = faultAt;
      const inFlight = before.filter((r) => r.state === 'in_flight').length;
      log(`round ${i + 1}: ${fault} of the primary ${node} with ${sentBefore.length} of ${seed.sends} sent (${inFlight} in flight)`);

      let promotedMs: number | null = null;
      let resumeMs: number | null = null;
      let promoted: string | null = null;
      let newPrimary: Store | null = null;
      const watchUntil = Date.now() + 120_000;
      while (Date.now() < watchUntil && (promotedMs === null || resumeMs === null)) {
        if (promotedMs === null) {
          // Another node answering as primary: an isolated old primary still answers too until
          // Patroni demotes it, so it is left out of the question.
          const now = await cluster.leader(nodes.filter((n) => n.name !== node));
          if (now) {
            promotedMs = Date.now() - faultAt;
            promoted = now;
            log(`round ${i + 1}: Patroni promoted ${now} ${promotedMs} ms after the ${fault}`);
          }
        } else {
          // Read on the new primary itself: an isolated old primary has commits of its own after
          // the fault (local, never replicated, rewound when it rejoins) that are not a resume.
          // The drill itself writes nothing.
          newPrimary ??= await openStore({ databaseUrl: await cluster.sh('url-of', promoted!), poolSize: 1 });
          const first = await firstCommitAfter(newPrimary, faultAt).catch(() => null);
          if (first !== null) {
            resumeMs = first - faultAt;
            log(`round ${i + 1}: Cadenza's first commit on the new primary ${resumeMs} ms after the ${fault}`);
          }
        }
        await sleep(100);
      }
      await newPrimary?.close().catch(() => undefined);
      const repliesAround = prospects.replies.filter((r) => r.at >= faultAt - 10_000 && r.at <= faultAt + (resumeMs ?? 0)).length;
      rounds.push({ fault, node, sentBefore: sentBefore.length, inFlight, promotedMs, resumeMs, repliesAround });
      // The faulty node comes back as the synchronous standby before the next round.
      if (i < o.faults.length - 1) {
        await cluster.sh('heal', node);
        await cluster.sh('wait');
        log(`round ${i + 1}: ${node} back as a standby`);
      }
    }

    // Settle: every request final, every reply stored; past the follow-ups' due time when asked.
    const followUpsDue = Date.now() + (o.waitForFollowUps ? o.followUpMinutes * 60_000 + 20_000 : 0);
    const settleBy = Date.now() + 120_000 + o.leadsPerMailbox * 75_000 + (o.waitForFollowUps ? o.followUpMinutes * 60_000 : 0);
    // The drill's own reads after the last fault: the first may meet a pooled connection to the
    // cut primary, which fails as "connection lost" (transient) once the server is found gone; an
    // observer's read is safe to repeat, so it is, on the next host.
    const observe = <T>(read: () => Promise<T>) => retryTransient(read, { clock: systemClock, withinMs: 60_000 });
    const requests = () => observe(() => drillRequests(store!));
    let after = await requests();
    const stored = () =>
      observe(async () => {
        const ids = prospects!.replies.map((r) => r.messageId);
        if (ids.length === 0) return new Set<string>();
        const rows = await store!.db.selectFrom('message').select('message_id').where('direction', '=', 'inbound').where('message_id', 'in', ids).execute();
        return new Set(rows.map((r) => r.message_id));
      });
    let storedIds = await stored();
    while (Date.now() < settleBy) {
      after = await requests();
      storedIds = await stored();
      const delivered = firstSteps(after).filter((r) => r.state === 'sent').length;
      const allReplied = prospects.replies.length >= delivered && storedIds.size === prospects.replies.length;
      if (after.every((r) => settledStates.has(r.state)) && allReplied && Date.now() >= followUpsDue) break;
      await sleep(250);
    }
    const settledMs = Date.now() - lastFaultAt;
    log(`settled: ${after.length} requests, ${storedIds.size} of ${prospects.replies.length} replies stored`);
    await sleep(1_500); // late deliveries land before counting
    await prospects.stop();
    after = await requests();
    storedIds = await stored();

    const verdict = await checkDeliveries(after, [...sentBeforeAll]);
    log('deliveries counted in the prospects\' INBOXes');
    const lostReplies: string[] = [];
    const notStopped: string[] = [];
    const followUpsAfterReply: string[] = [];
    for (const r of prospects.replies) {
      if (!storedIds.has(r.messageId)) lostReplies.push(`${r.messageId} from ${r.from} not stored`);
      const sent = after.find((x) => x.message_id === r.inReplyTo);
      if (!sent) {
        lostReplies.push(`${r.messageId} answers ${r.inReplyTo}, which no request sent`);
        continue;
      }
      const e = await store.db.selectFrom('enrollment').select(['state', 'due_at']).where('id', '=', sent.enrollment_id).executeTakeFirstOrThrow();
      if (e.state !== 'replied') notStopped.push(`${sent.email}: enrollment ${e.state} after its reply ${r.messageId}`);
      for (const f of after.filter((x) => x.enrollment_id === sent.enrollment_id && x.step_key !== 'intro' && x.state !== 'cancelled')) {
        followUpsAfterReply.push(`${sent.email}: follow-up ${f.state}`);
      }
    }
    for (const id of prospects.followUps) followUpsAfterReply.push(`follow-up ${id} reached its prospect`);
    for (const e of prospects.errors) lostReplies.push(`prospect loop failed: ${e}`);
    const delivered = firstSteps(after).filter((r) => r.state === 'sent' || r.state === 'possibly_sent').length;
    if (prospects.replies.length < delivered) lostReplies.push(`${delivered} first emails sent, only ${prospects.replies.length} answered by the prospects (delivery or the prospects' loop)`);
    return { sends: seed.sends, rounds, replies: prospects.replies.length, settledMs, ...verdict, lostReplies, notStopped, followUpsAfterReply, output: cadenza.output() };
  } finally {
    await prospects?.stop().catch(() => undefined);
    await commits?.stop();
    if (cadenza) {
      const t0 = Date.now();
      const how = await cadenza.stop();
      log(how === 'exited' ? `cadenza stopped on SIGTERM in ${Date.now() - t0} ms` : 'cadenza did not stop within 10 s of SIGTERM: killed');
    }
    await store?.close().catch(() => undefined);
    if (process.env.DRILL_KEEP_CLUSTER === '1') {
      if (cadenza) writeFileSync(join(o.clusterDir, 'cadenza.log'), cadenza.output());
      log(`cluster kept (DRILL_KEEP_CLUSTER=1): ${o.clusterDir}, Cadenza's log in cadenza.log; patroni-cluster.sh destroy removes it`);
    }
    else {
      await cluster.sh('destroy').catch(() => undefined);
      log('cluster destroyed');
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// `npm run drill:patroni`: the full drill, its figures printed, the JSON line last.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const skip = await patroniTools();
  if (skip) {
    console.error(`drill skipped: ${skip}`);
    process.exit(2);
  }
  // The settings checked before any cluster is built: a bad one is a line on stderr, not a stack.
  let faultList: Fault[];
  let etcdHold: { etcdHoldS?: number };
  try {
    faultList = parseFaults(process.env.DRILL_FAULTS ?? 'kill,cut');
    etcdHold = process.env.DRILL_ETCD_HOLD_S ? { etcdHoldS: positiveSeconds('DRILL_ETCD_HOLD_S', process.env.DRILL_ETCD_HOLD_S) } : {};
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  const r = await runPatroniDrill({
    mailboxes: Number(process.env.DRILL_MAILBOXES ?? 8),
    leadsPerMailbox: Number(process.env.DRILL_LEADS ?? 2),
    faults: faultList,
    followUpMinutes: Number(process.env.DRILL_FOLLOW_UP_MINUTES ?? 2),
    waitForFollowUps: process.env.DRILL_WAIT_FOLLOW_UPS !== '0',
    clusterDir: process.env.PATRONI_DIR ?? join(tmpdir(), 'cadenza-patroni-drill'),
    ttl: Number(process.env.PATRONI_TTL ?? 12),
    ...(process.env.PATRONI_NODES ? { nodes: Number(process.env.PATRONI_NODES) as 2 | 3 } : {}),
    failsafe: process.env.PATRONI_FAILSAFE === '1',
    ...etcdHold,
    log: (l) => console.log(l),
  });
  const { output, ...figures } = r;
  const ok = [r.duplicates, r.forgotten, r.unsettled, r.lostReplies, r.notStopped, r.followUpsAfterReply].every((l) => l.length === 0) && r.rounds.every((x) => x.resumeMs !== null);
  if (!ok) console.log(output);
  for (const x of r.rounds) {
    if (x.etcd) {
      const e = x.etcd;
      console.log(
        `${x.fault} (${e.members}) under the primary ${x.node}: ${x.sentBefore} sent and ${x.inFlight} in flight at the fault; primary ${e.primaryChanged ? `changed (another answered after ${x.promotedMs} ms)` : 'unchanged'}, ` +
          `demoted ${e.demotedMs === null ? 'never' : `after ${e.demotedMs} ms`}` +
          (e.quorumLostMs !== null ? `; quorum back after ${e.quorumLostMs} ms, ${e.primaryAfter} primary ${e.primaryAfterRestoreMs} ms and Cadenza's first commit ${e.commitAfterRestoreMs} ms after that` : `; etcd leader again after ${e.etcdLeaderMs} ms`) +
          `; longest gap between Cadenza's commits ${e.stallMs} ms (before the fault ${e.baselineGapMs} ms); ${x.repliesAround} replies under way`,
      );
    } else console.log(`${x.fault} of ${x.node}: ${x.sentBefore} sent and ${x.inFlight} in flight at the fault, promoted after ${x.promotedMs} ms, Cadenza resumed after ${x.resumeMs} ms, ${x.repliesAround} replies under way`);
  }
  console.log(`${r.sends} sends, ${r.replies} replies; settled ${r.settledMs} ms after the last fault; duplicates ${r.duplicates.length}, forgotten ${r.forgotten.length}, unsettled ${r.unsettled.length}, lost replies ${r.lostReplies.length}, not stopped ${r.notStopped.length}, follow-ups after a reply ${r.followUpsAfterReply.length}`);
  console.log(JSON.stringify({ ok, ...figures }));
  process.exit(ok ? 0 : 1);
}
