/**
 * The exchange, run by one process at a time (the `warmup-federation` lease, like plan-role.ts):
 * every `everyMs`, each pending or active peer whose retry time has come is called (exchange.ts
 * through client.ts). Peers are called one after another, each under the client's deadline; a
 * peer that is down gets its failure counted and its next try pushed back (RETRY, doubling to an
 * hour), and nothing of the local pool waits on it: planning, sending and receiving read only what
 * the last good exchange stored.
 *
 * A refusal that says the peering ended (the peer removed us, or never knew us while we thought
 * it active) ends it here too. `exchangeNow` is the on-demand path (API, CLI).
 */
import type { Clock, TimerHandle } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import { Leases } from '../../ops/leases.ts';
import type { Store } from '../../store/store.ts';
import { callPeer } from './client.ts';
import { offerFor, reportsFor, scheduleFor, takeAnswer } from './exchange.ts';
import type { FederationIdentity } from './identity.ts';
import { activatePeer, endPeering, peerOf, purgeEnded, type Peer } from './peers.ts';
import { EXCHANGE_PATH, exchangeAnswer, LEAVE_PATH, readBody } from './wire.ts';

export const FEDERATION_LEASE = 'warmup-federation';
const LEASE_TTL_MS = 10 * 60_000;
/** The first retry after a failure; doubled per failure up to MAX_RETRY_MS. */
const RETRY_MS = 30_000;
const MAX_RETRY_MS = 3_600_000;

export interface FederationDeps {
  store: Store;
  clock: Clock;
  identity: FederationIdentity;
  owner: string;
  log?: Logger;
  /** How often the role exchanges with every peer (default 10 min). */
  everyMs?: number;
}

export type ExchangeOutcome =
  | { peerId: string; ok: true; accepted: number; refused: number; members: number }
  | { peerId: string; ok: false; ended: boolean; error: string };

export function retryDelay(failures: number): number {
  return Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** Math.max(0, Math.min(failures - 1, 20)));
}

/** One exchange with one peer; never throws for the peer's faults (they are recorded on the peer). */
export async function exchangeWith(d: Omit<FederationDeps, 'owner'>, peer: Peer): Promise<ExchangeOutcome> {
  const db = d.store.db;
  const now = () => d.clock.now();
  const sent = { members: await offerFor(db, peer), schedule: await scheduleFor(db, peer, now()), reports: await reportsFor(db, peer) };
  const r = await callPeer(d.identity, peer, EXCHANGE_PATH, sent, now);
  const failed = async (error: string): Promise<ExchangeOutcome> => {
    const failures = peer.failures + 1;
    await db.updateTable('warmup_peer').set({ failures, retry_at: new Date(now() + retryDelay(failures)), last_error: error.slice(0, 500) }).where('id', '=', peer.id).execute();
    d.log?.warn({ peerId: peer.id, failures, err: error }, 'warmup federation: exchange failed');
    return { peerId: peer.id, ok: false, ended: false, error };
  };
  if (!r.ok) {
    if (r.kind === 'refused' && (r.reason === 'peer-left' || (r.reason === 'unknown-peer' && peer.state === 'active'))) {
      await endPeering(db, peer.id, 'peer', now());
      return { peerId: peer.id, ok: false, ended: true, error: r.message };
    }
    return failed(r.message);
  }
  let ans;
  try {
    ans = readBody(exchangeAnswer, r.body);
  } catch (e) {
    return failed(`the peer's answer is invalid: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (peer.state === 'pending') await activatePeer(db, peer.id, now());
  const got = await takeAnswer(db, peer, sent, ans, now());
  return { peerId: peer.id, ok: true, ...got, members: ans.members.length };
}

/** Tells the peer we left (best effort: it learns it at its next request otherwise). */
export async function sendLeave(d: Omit<FederationDeps, 'owner'>, peer: Pick<Peer, 'url' | 'signKey' | 'id'>): Promise<boolean> {
  const r = await callPeer(d.identity, peer, LEAVE_PATH, { reason: 'removed by its operator' }, () => d.clock.now());
  if (!r.ok) d.log?.info({ peerId: peer.id, err: r.message }, 'warmup federation: leave notice not delivered');
  return r.ok;
}

/** Every due peer, under the lease; null when another process holds it. */
export async function exchangeAll(d: FederationDeps): Promise<ExchangeOutcome[] | null> {
  const leases = new Leases(d.store, d.clock);
  const lease = await leases.acquire(FEDERATION_LEASE, d.owner, LEASE_TTL_MS);
  if (!lease) return null;
  try {
    const now = d.clock.now();
    await purgeEnded(d.store.db, now);
    const rows = await d.store.db
      .selectFrom('warmup_peer')
      .selectAll()
      .where('state', 'in', ['pending', 'active'])
      .where((eb) => eb.or([eb('retry_at', 'is', null), eb('retry_at', '<=', new Date(now))]))
      .orderBy('added_at')
      .execute();
    const out: ExchangeOutcome[] = [];
    for (const row of rows) out.push(await exchangeWith(d, peerOf(row)));
    return out;
  } finally {
    await leases.release(lease).catch(() => undefined);
  }
}

export class FederationRole {
  private timer: TimerHandle | null = null;
  private stopped = false;
  private running: Promise<unknown> = Promise.resolve();
  constructor(private readonly d: FederationDeps) {}

  start(): void {
    void this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running;
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    this.running = exchangeAll(this.d).catch((e: unknown) => this.d.log?.error({ err: e instanceof Error ? e.message : String(e) }, 'warmup federation pass failed'));
    await this.running;
    if (!this.stopped) this.timer = this.d.clock.setTimer(this.d.everyMs ?? 600_000, () => void this.tick());
  }
}
