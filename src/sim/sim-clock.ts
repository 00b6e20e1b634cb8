import type { Clock, TimerHandle } from '../common/clock.ts';

/**
 * A clock that moves only when told. Timers fire in deadline order (ties in insertion order) as
 * advance() passes them, so a run is the same every time from the same inputs.
 */
export class SimClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Array<{ at: number; seq: number; fn: () => void; live: boolean }> = [];

  constructor(startMs: number) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, live: true };
    this.timers.push(timer);
    return { cancel: () => void (timer.live = false) };
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimer(ms, resolve));
  }

  /** The next pending timer's deadline, if any. */
  nextTimerAt(): number | undefined {
    let best: number | undefined;
    for (const x of this.timers) if (x.live && (best === undefined || x.at < best)) best = x.at;
    return best;
  }

  /** Moves time to `to`, firing every timer due on the way, in order. */
  advanceTo(to: number): void {
    for (;;) {
      this.timers = this.timers.filter((x) => x.live);
      let next: (typeof this.timers)[number] | undefined;
      for (const x of this.timers) if (x.at <= to && (!next || x.at < next.at || (x.at === next.at && x.seq < next.seq))) next = x;
      if (!next) break;
      next.live = false;
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = Math.max(this.t, to);
  }

  advance(ms: number): void {
    this.advanceTo(this.t + ms);
  }
}
