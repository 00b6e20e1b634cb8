import { systemClock, type Clock, type TimerHandle } from '../common/clock.ts';

/**
 * The demo's accelerated clock: simulated time starts at `startMs` and runs `rate` times faster
 * than the real clock under it (3,600: one simulated hour per real second). Every part of the demo
 * (scheduler, pacing, calendar, senders, sync loops, emulators) reads this one clock, so they agree
 * on what time it is; a timer for a simulated hour fires after a real second.
 *
 * Deadlines that guard real I/O (an HTTP exchange, a lease between processes) are real-time
 * concerns: callers size them with realMs() so that a 15 s timeout stays 15 real seconds.
 */
export class AcceleratedClock implements Clock {
  private readonly realStart: number;

  constructor(
    readonly startMs: number,
    readonly rate: number,
    private readonly real: Clock = systemClock,
  ) {
    if (!(rate >= 1)) throw new RangeError(`clock rate must be at least 1, got ${rate}`);
    this.realStart = real.now();
  }

  now(): number {
    return this.startMs + Math.floor((this.real.now() - this.realStart) * this.rate);
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    return this.real.setTimer(Math.max(0, ms) / this.rate, fn);
  }

  sleep(ms: number): Promise<void> {
    return this.real.sleep(Math.max(0, ms) / this.rate);
  }

  /** The simulated span that lasts `realMs` real milliseconds. */
  realMs(realMs: number): number {
    return realMs * this.rate;
  }
}
