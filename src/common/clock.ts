/**
 * The only door to time. Logic receives a Clock; nothing in src/ outside this file and
 * src/sim/ calls Date.now, setTimeout or setInterval directly (ARCHITECTURE: deterministic simulation).
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs fn after ms milliseconds of this clock's time. Background timers never keep the process alive. */
  setTimer(ms: number, fn: () => void): TimerHandle;
  /** Resolves after ms milliseconds of this clock's time. */
  sleep(ms: number): Promise<void>;
  /**
   * How many times faster than real time this clock runs (a demo's accelerated clock); absent: 1.
   * A duration between two of its stamps divided by it is a duration a person can compare.
   */
  readonly rate?: number;
}

/** Real milliseconds of a span measured between two stamps of `clock`. */
export function realSpanMs(clock: Clock, spanMs: number): number {
  return spanMs / (clock.rate ?? 1);
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  sleep(ms) {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, Math.max(0, ms));
      t.unref();
    });
  },
};
