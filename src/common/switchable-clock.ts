import type { Clock, TimerHandle } from './clock.ts';

/**
 * The time of the world the API shows and acts on: its base clock, or, while a demo runs in this
 * process, the demo's accelerated clock (src/demo/demo-clock.ts), so that a person pausing,
 * replying, relabelling or enrolling during a demo is stamped in the demo's time, beside what the
 * demo's engine writes, and "today" in analytics is the demo's today. Back to the base when the
 * demo ends.
 *
 * Only now() switches. Timers and sleeps always run on the base clock: where the API waits, it
 * guards real input and output (an HTTP deadline, a mailbox test, a debounce), which a faster
 * clock must not shorten. And what runs in real time (sessions, API keys, sign-in limits,
 * invitations, webhooks out) reads the base clock itself (ApiContext.realClock), or a fast demo
 * would sign everyone out.
 */
export class SwitchableClock implements Clock {
  private current: Clock;

  constructor(readonly base: Clock) {
    this.current = base;
  }

  /** Reads `clock` from now on (a demo's). */
  use(clock: Clock): void {
    this.current = clock;
  }

  /** Back to the base clock. */
  reset(): void {
    this.current = this.base;
  }

  get switched(): boolean {
    return this.current !== this.base;
  }

  now(): number {
    return this.current.now();
  }

  get rate(): number {
    return this.current.rate ?? 1;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    return this.base.setTimer(ms, fn);
  }

  sleep(ms: number): Promise<void> {
    return this.base.sleep(ms);
  }
}
