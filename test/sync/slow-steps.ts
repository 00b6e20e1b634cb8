import type { IngestSteps } from '../../src/ingest/pipeline.ts';
import { defaultIngestSteps } from '../../src/ingest/pipeline-steps.ts';

/**
 * The real stages, made slow on purpose for tests of the deadline and the lease: a message with a
 * header `X-Test-Spin-Ms: N` busy-waits N ms in its parse, synchronously, as a parser or a regex
 * that never yields would (nothing but terminating the thread can stop it). With
 * `X-Test-Spin-Once: yes` it spins only the first time this module sees its bytes.
 */
const seen = new Set<string>();

export function spinMsOf(raw: Uint8Array): number {
  const head = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, 4096)).toString('latin1');
  const m = /^X-Test-Spin-Ms: (\d+)\r?$/im.exec(head);
  if (!m) return 0;
  if (/^X-Test-Spin-Once: yes\r?$/im.test(head)) {
    if (seen.has(head)) return 0;
    seen.add(head);
  }
  return Number(m[1]);
}

export function createSteps(): IngestSteps {
  const real = defaultIngestSteps();
  return {
    ...real,
    parse(raw) {
      const ms = spinMsOf(raw);
      const until = performance.now() + ms;
      while (performance.now() < until) {
        // busy: the thread does nothing else meanwhile
      }
      return real.parse(raw);
    },
  };
}

export const slowStepsModule = new URL('./slow-steps.ts', import.meta.url);
