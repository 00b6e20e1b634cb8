import fc from 'fast-check';
import { expect, it } from 'vitest';
import { FairQueue } from './fair-queue.ts';

type Op = { push: string } | { shift: true };

/**
 * Whatever the order of pushes and shifts: each key's items come out in arrival order, nothing is
 * lost or duplicated, and an item waits at most (items ahead of it in its own lane + 1) turns of
 * every key, where a FIFO would make it wait for everything pushed before it.
 */
it('serves keys in turn, each key in arrival order, nothing lost (property)', () => {
  const key = fc.constantFrom('a', 'b', 'c', 'd');
  const op: fc.Arbitrary<Op> = fc.oneof({ arbitrary: key.map((k) => ({ push: k })), weight: 3 }, { arbitrary: fc.constant({ shift: true as const }), weight: 2 });
  fc.assert(
    fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
      const q = new FairQueue<{ key: string; n: number; at: number; ahead: number }>();
      const pending = new Map<string, number>();
      const lastOut = new Map<string, number>();
      let pushed = 0;
      let shifts = 0;
      const out: string[] = [];
      const check = (e: { key: string; item: { key: string; n: number; at: number; ahead: number } }) => {
        expect(e.key).toBe(e.item.key);
        expect(e.item.n).toBe((lastOut.get(e.key) ?? -1) + 1);
        lastOut.set(e.key, e.item.n);
        pending.set(e.key, pending.get(e.key)! - 1);
        expect(shifts - e.item.at).toBeLessThanOrEqual((e.item.ahead + 1) * 4);
        out.push(e.key);
      };
      const counts = new Map<string, number>();
      for (const o of ops) {
        if ('push' in o) {
          const n = counts.get(o.push) ?? 0;
          counts.set(o.push, n + 1);
          q.push(o.push, { key: o.push, n, at: shifts, ahead: pending.get(o.push) ?? 0 });
          pending.set(o.push, (pending.get(o.push) ?? 0) + 1);
          pushed++;
        } else {
          shifts++;
          const e = q.shift();
          if (e) check(e);
          else expect(q.length).toBe(0);
        }
      }
      while (q.length) {
        shifts++;
        check(q.shift()!);
      }
      expect(out.length).toBe(pushed);
      expect(q.keys).toBe(0);
    }),
    { numRuns: 300, seed: 20261203 },
  );
});

it('skips a key the caller does not allow now, and keeps its place for later', () => {
  const q = new FairQueue<string>();
  q.push('a', 'a1');
  q.push('a', 'a2');
  q.push('b', 'b1');
  expect(q.shift((k) => k !== 'a')).toEqual({ key: 'b', item: 'b1' });
  expect(q.shift((k) => k !== 'a')).toBeUndefined();
  expect(q.shift()).toEqual({ key: 'a', item: 'a1' });
  expect(q.drain()).toEqual(['a2']);
  expect(q.length).toBe(0);
});
