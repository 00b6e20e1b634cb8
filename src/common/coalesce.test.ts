import { describe, expect, it } from 'vitest';
import { coalesce } from './coalesce.ts';

describe('coalesce', () => {
  it('runs at most one pass in flight plus one queued, however many triggers come', async () => {
    let runs = 0;
    let inFlight = 0;
    let most = 0;
    const release: Array<() => void> = [];
    const pass = coalesce(async () => {
      runs++;
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => release.push(r));
      inFlight--;
    });
    const first = pass();
    const rest = Array.from({ length: 10_000 }, () => pass());
    expect(runs).toBe(1);
    release.shift()!();
    await first;
    // The queued pass starts once the first is done, and covers every trigger that came meanwhile.
    await Promise.resolve();
    expect(runs).toBe(2);
    release.shift()!();
    await Promise.all(rest);
    expect(runs).toBe(2);
    expect(most).toBe(1);
    // A trigger after both finished runs again.
    const again = pass();
    expect(runs).toBe(3);
    release.shift()!();
    await again;
  });

  it('reports a failed pass to onError and keeps working', async () => {
    const errors: unknown[] = [];
    let n = 0;
    const pass = coalesce(async () => {
      if (++n === 1) throw new Error('store down');
    }, (e) => errors.push(e));
    await pass();
    await pass();
    expect(n).toBe(2);
    expect(errors.map((e) => (e as Error).message)).toEqual(['store down']);
  });
});
