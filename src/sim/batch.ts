import type { Store } from '../store/store.ts';
import { runSeed, SimulationFailure, type SimOptions, type SimStats } from './simulation.ts';

/**
 * Many seeds on one store: what CI and `npm run sim` run. One store serves every seed (it is
 * truncated at the start of each), so a seed costs its own work only.
 */

export interface BatchOptions extends Omit<SimOptions, 'seed' | 'store'> {
  from: number;
  seeds: number;
  store: Store;
  /** After each seed (progress). */
  onSeed?: (seed: number, done: number, failure?: SimulationFailure) => void;
  /** Stop at the first failure. */
  failFast?: boolean;
}

export interface BatchResult {
  seeds: number;
  stats: SimStats;
  failures: SimulationFailure[];
  elapsedMs: number;
}

export function emptyStats(): SimStats {
  return {
    steps: 0, enrollments: 0, interleaved: 0, repliesAtDue: 0, repliesLandedBeforeDue: 0, deferredAtMailboxLook: 0, deliveries: 0, claims: 0, refusedAtClaim: 0, refusedAtLastLook: 0, pacedRefusals: 0, dispatchPasses: 0, replies: 0, warmupReceived: 0, warmupPeopleMail: 0, warmupFromPeer: 0, peerLeaves: 0, placementPasses: 0, placementChanges: 0, bounces: 0,
    outOfOffice: 0, unsubscribes: 0, meetings: 0, pauses: 0, resumes: 0, stops: 0, moves: 0, intents: {}, replyNotices: 0, replyMoves: 0, replyMovesRefused: 0, tasksCompleted: 0, edits: 0, armEnrollments: 0, armSteps: 0, timersFired: 0,
    transientFailures: 0, permanentFailures: 0, unknownOutcomes: 0, unknownFound: 0, unknownRequeued: 0, unknownPossiblySent: 0, bouncesAtRcpt: 0, groupRecords: 0, groupRecordedSends: 0,
    crashes: { total: 0, inTransaction: 0, claimToSend: 0, copyToAnswer: 0, sendToRecord: 0, anywhere: 0 }, crmActivities: 0, crmWritten: 0, crmLostAnswers: 0, crmOutages: 0, checks: 0,
  };
}

export function addStats(into: SimStats, s: SimStats): void {
  for (const k of Object.keys(s) as Array<keyof SimStats>) {
    if (k === 'crashes') for (const c of Object.keys(s.crashes) as Array<keyof SimStats['crashes']>) into.crashes[c] += s.crashes[c];
    else if (k === 'intents') for (const [i, n] of Object.entries(s.intents)) into.intents[i] = (into.intents[i] ?? 0) + n;
    else into[k] += s[k];
  }
}

/** Runs seeds from..from+seeds-1; a failing seed is recorded (with its replay command) and the run goes on. */
export async function runSeeds(o: BatchOptions, elapsed: () => number): Promise<BatchResult> {
  const t0 = elapsed();
  const stats = emptyStats();
  const failures: SimulationFailure[] = [];
  let done = 0;
  for (let seed = o.from; seed < o.from + o.seeds; seed++) {
    const { from: _f, seeds: _s, onSeed: _o, failFast: _ff, ...sim } = o;
    try {
      const r = await runSeed({ ...sim, seed });
      addStats(stats, r.stats);
      done++;
      o.onSeed?.(seed, done);
    } catch (e) {
      if (!(e instanceof SimulationFailure)) throw e;
      failures.push(e);
      done++;
      o.onSeed?.(seed, done, e);
      if (o.failFast) break;
    }
  }
  return { seeds: done, stats, failures, elapsedMs: elapsed() - t0 };
}

export function formatSummary(r: BatchResult): string {
  const s = r.stats;
  const secs = r.elapsedMs / 1000;
  const lines = [
    `seeds ${r.seeds} in ${secs.toFixed(1)} s (${(r.seeds / Math.max(secs, 1e-9)).toFixed(2)} seeds/s), ${s.steps} steps`,
    `enrollments ${s.enrollments}, timers fired ${s.timersFired}, claims ${s.claims}, sends delivered ${s.deliveries}`,
    `pacing: ${s.dispatchPasses} dispatcher passes, ${s.pacedRefusals} claims refused by a mailbox's bucket and planned again`,
    `refused: at claim ${s.refusedAtClaim}, at the last look ${s.refusedAtLastLook}; transport: transient ${s.transientFailures}, permanent ${s.permanentFailures}, unknown ${s.unknownOutcomes} (found in Sent ${s.unknownFound}, possibly sent ${s.unknownPossiblySent}, requeued ${s.unknownRequeued}), bounces at RCPT ${s.bouncesAtRcpt}; group commits of accepted sends ${s.groupRecords} (${s.groupRecordedSends} sends)`,
    `interleavings: signals or rep actions between a claim and its send ${s.interleaved}, replies exactly at a due time ${s.repliesAtDue}, replies in the mailbox just before a due time ${s.repliesLandedBeforeDue} (sends deferred by the mailbox last look ${s.deferredAtMailboxLook})`,
    `signals: replies ${s.replies}, bounces ${s.bounces}, out-of-office ${s.outOfOffice}, unsubscribes ${s.unsubscribes}, meetings ${s.meetings}`,
    `reply intents: ${Object.entries(s.intents).sort().map(([i, n]) => `${i} ${n}`).join(', ') || 'none'}; reply rules: ${s.replyNotices} owner notices, ${s.replyMoves} moves to the nurture (${s.replyMovesRefused} refused)`,
    `warmup: ${s.warmupReceived} warmup mails taken aside, ${s.warmupPeopleMail} mails people wrote in the same batches (none taken for warmup); ${s.warmupFromPeer} from a federation peer's member, ${s.peerLeaves} peerings ended; ${s.placementPasses} placement passes changed ${s.placementChanges} members' health or cap`,
    `reps: pauses ${s.pauses}, resumes ${s.resumes}, stops ${s.stops}, moves to another sequence ${s.moves}, tasks completed ${s.tasksCompleted}; sequence edits ${s.edits}`,
    `experiments: ${s.armEnrollments} enrollments in an arm of a sequence experiment (timing, order, variants on several steps), ${s.armSteps} steps run by them`,
    `CRM sync: ${s.crmActivities} activities queued, ${s.crmWritten} written, ${s.crmLostAnswers} answers lost after the CRM acted, ${s.crmOutages} outages`,
    `crashes ${s.crashes.total}: in a transaction ${s.crashes.inTransaction}, between claim and send ${s.crashes.claimToSend}, between the Sent copy or handover and the answer ${s.crashes.copyToAnswer}, between acceptance and record ${s.crashes.sendToRecord}, anywhere ${s.crashes.anywhere}`,
    `invariant checks ${s.checks}`,
    r.failures.length ? `FAILURES ${r.failures.length}: seeds ${r.failures.map((f) => f.seed).join(', ')}` : 'failures 0',
  ];
  for (const f of r.failures) lines.push('', f.message);
  return lines.join('\n');
}
