import type { Clock, TimerHandle } from './clock.ts';

export interface Periodic {
  /** Cancels the next run and waits for one in progress; nothing runs after it resolves. */
  stop(): Promise<void>;
}

/**
 * Runs `task` now, then `everyMs` after each run ends (never two at once, never a backlog after a
 * slow run), on the given clock. A failed run is handed to `onError` and the next one still comes.
 */
export function runEvery(clock: Clock, everyMs: number, task: () => Promise<void>, onError: (e: unknown) => void): Periodic {
  let timer: TimerHandle | undefined;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = task()
      .catch(onError)
      .then(() => {
        if (!stopped) timer = clock.setTimer(everyMs, run);
      });
  };
  run();
  return {
    async stop() {
      stopped = true;
      timer?.cancel();
      await running;
    },
  };
}
