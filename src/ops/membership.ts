import type { Clock, TimerHandle } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Store } from '../store/store.ts';
import { provablyGone, systemPidProbe, thisProcess, type PidProbe, type ProcessIdentity } from './process-identity.ts';

/**
 * Who works a role right now (the `member` table, 0020_member.sql). Each pool joins with a row
 * named by its lease owner and renews it every `heartbeatMs`; a graceful stop deletes it. From the
 * rows, every process derives the same view:
 *
 *   live  members whose heartbeat is fresh and that are not provably dead: the fair share divides
 *         the mailboxes between them, so a process that holds nothing yet still gets its share;
 *   gone  members whose heartbeat is older than `staleAfter` intervals, or that run on this host
 *         and whose process is provably dead (process-identity.ts): their leases are taken over at
 *         once, with new fencing tokens, instead of after their TTL.
 *
 * A member judged gone that is in fact alive (stalled longer than staleAfter intervals) loses its
 * leases exactly as one whose lease expired: its writes are refused by `holds()`, its next renew
 * fails and its loops stop. So staleAfter × heartbeatMs is kept well above any pause a healthy
 * process has (default 5 × 3 s), and far below the lease TTL (60 s) it shortcuts.
 *
 * Each heartbeat also reads the view and calls `onChange` when the live set changed: a member
 * that joined, left or died is noticed within one heartbeat even when its push-bus nudge is lost.
 */
export interface MemberView {
  live: string[];
  gone: string[];
}

export interface MembershipOptions {
  store: Store;
  clock: Clock;
  role: string;
  /** This member's id: the pool's lease owner. */
  id: string;
  heartbeatMs?: number;
  staleAfter?: number;
  identity?: ProcessIdentity;
  probe?: PidProbe;
  onChange?: () => void;
  log?: Logger;
}

/** Rows gone stale this long are deleted by whichever member beats next (their leases expired long ago). */
const FORGET_AFTER_MS = 3_600_000;

export class Membership {
  private readonly me: ProcessIdentity;
  private timer: TimerHandle | undefined;
  private joined = false;
  private lastLive = '';

  constructor(private readonly o: MembershipOptions) {
    this.me = o.identity ?? thisProcess();
  }

  get heartbeatMs(): number {
    return this.o.heartbeatMs ?? 3_000;
  }

  async join(): Promise<void> {
    this.joined = true;
    await this.write();
    this.lastLive = (await this.view()).live.join(',');
    this.schedule();
  }

  /** Graceful leave: the row goes, so the others re-divide at their next look (or nudge) without waiting for staleness. */
  async leave(): Promise<void> {
    this.joined = false;
    this.timer?.cancel();
    await this.o.store.db.deleteFrom('member').where('id', '=', this.o.id).execute();
  }

  async view(): Promise<MemberView> {
    const now = this.o.clock.now();
    const staleBefore = now - this.heartbeatMs * (this.o.staleAfter ?? 5);
    const rows = await this.o.store.db.selectFrom('member').selectAll().where('role', '=', this.o.role).orderBy('id').execute();
    const live: string[] = [];
    const gone: string[] = [];
    for (const r of rows) {
      if (r.id === this.o.id) continue;
      const holder: ProcessIdentity = { host: r.host, pid: r.pid, bootId: r.boot_id, pidNs: r.pid_ns, startTicks: r.start_ticks === null ? null : Number(r.start_ticks) };
      if (r.heartbeat_at.getTime() <= staleBefore || provablyGone(holder, this.me, this.o.probe ?? systemPidProbe)) gone.push(r.id);
      else live.push(r.id);
    }
    if (this.joined) live.push(this.o.id);
    return { live: live.sort(), gone };
  }

  private async write(): Promise<void> {
    const now = new Date(this.o.clock.now());
    await this.o.store.db
      .insertInto('member')
      .values({ id: this.o.id, role: this.o.role, host: this.me.host, pid: this.me.pid, boot_id: this.me.bootId, pid_ns: this.me.pidNs, start_ticks: this.me.startTicks, joined_at: now, heartbeat_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: now }))
      .execute();
  }

  private schedule(): void {
    this.timer = this.o.clock.setTimer(this.heartbeatMs, () => void this.beat());
  }

  private async beat(): Promise<void> {
    if (!this.joined) return;
    try {
      await this.write();
      await this.o.store.db.deleteFrom('member').where('heartbeat_at', '<', new Date(this.o.clock.now() - FORGET_AFTER_MS)).execute();
      const live = (await this.view()).live.join(',');
      if (live !== this.lastLive) {
        this.lastLive = live;
        this.o.onChange?.();
      }
    } catch (e) {
      this.o.log?.warn({ err: e, role: this.o.role }, 'membership heartbeat failed');
    }
    if (this.joined) this.schedule();
  }
}
