import cliProgress from 'cli-progress';

/**
 * A progress bar on stderr for long work, only when stderr is a terminal and the output is not
 * JSON: pipes and CI logs get the final summary alone.
 */
export function progressBar(enabled: boolean, label: string): { update(done: number, total?: number): void; stop(): void } {
  if (!enabled || !process.stderr.isTTY) return { update() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {percentage}% | {value}/{total} | {eta_formatted} left`, stream: process.stderr, hideCursor: true, etaBuffer: 50 },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(total ?? 0, done);
        started = true;
      }
      if (total !== undefined) bar.setTotal(total);
      bar.update(done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
