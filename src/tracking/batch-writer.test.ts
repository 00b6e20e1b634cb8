import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimClock } from '../sim/sim-clock.ts';
import { BatchWriter } from './batch-writer.ts';

/** Lets the writer's promise chains run (a write resolves on the next ticks). */
const settle = () => new Promise<void>((r) => setImmediate(r));

function sink(opts: { failTimes?: number } = {}) {
  const batches: number[][] = [];
  let fail = opts.failTimes ?? 0;
  return {
    batches,
    all: () => batches.flat(),
    async write(b: number[]) {
      await Promise.resolve();
      if (fail > 0) {
        fail--;
        throw new Error('database unavailable');
      }
      batches.push([...b]);
    },
  };
}

describe('BatchWriter', () => {
  it('flushes as soon as maxBatch items wait, without waiting for the timer', async () => {
    const clock = new SimClock(0);
    const s = sink();
    const w = new BatchWriter<number>({ clock, write: s.write, maxBatch: 3, flushMs: 1000 });
    w.add(1);
    w.add(2);
    await settle();
    expect(s.batches).toEqual([]);
    w.add(3);
    await w.flush();
    expect(s.batches).toEqual([[1, 2, 3]]);
    expect(w.stats()).toMatchObject({ queued: 0, written: 3, batches: 1 });
    await w.close();
  });

  it('flushes flushMs after the first item when fewer than maxBatch arrive', async () => {
    const clock = new SimClock(0);
    const s = sink();
    const w = new BatchWriter<number>({ clock, write: s.write, maxBatch: 100, flushMs: 1000 });
    w.add(1);
    clock.advance(400);
    w.add(2);
    clock.advance(599);
    await settle();
    expect(s.batches).toEqual([]);
    clock.advance(1); // 1000 ms after the first item
    await settle();
    await settle();
    expect(s.batches).toEqual([[1, 2]]);
    // The next item starts a new period.
    w.add(3);
    clock.advance(999);
    await settle();
    expect(s.batches.length).toBe(1);
    clock.advance(1);
    await settle();
    await settle();
    expect(s.batches).toEqual([[1, 2], [3]]);
    expect(clock.nextTimerAt()).toBeUndefined();
    await w.close();
  });

  it('group commit: addAndWait resolves once its batch has committed; what arrives meanwhile shares the next batch', async () => {
    const clock = new SimClock(0);
    const writes: Array<() => void> = [];
    const batches: number[][] = [];
    const w = new BatchWriter<number>({
      clock,
      maxBatch: 100,
      flushMs: 60_000,
      write: async (b) => {
        await new Promise<void>((r) => writes.push(r)); // each write waits for the test
        batches.push([...b]);
      },
    });
    /** Waits (turns of the event loop, never the clock) until the writer has started its n-th write. */
    const started = async (n: number) => {
      for (let i = 0; i < 10 && writes.length < n; i++) await settle();
      expect(writes.length).toBe(n);
    };
    const first = w.addAndWait(1);
    await started(1); // the next turn starts the batch: no flushMs, no timer
    const more = [w.addAndWait(2), w.addAndWait(3), w.addAndWait(4)];
    let firstDone: string | null = null;
    void first.then((o) => (firstDone = o));
    await settle();
    expect(firstDone).toBeNull(); // not committed yet, not answered
    writes[0]!();
    expect(await first).toBe('written');
    expect(batches).toEqual([[1]]);
    await started(2);
    writes[1]!(); // the three that arrived during the first write went together
    expect(await Promise.all(more)).toEqual(['written', 'written', 'written']);
    expect(batches).toEqual([[1], [2, 3, 4]]);
    expect(w.stats()).toMatchObject({ written: 4, batches: 2, unconfirmed: 0 });
    expect(clock.nextTimerAt()).toBeUndefined();
    await w.close();
  });

  it('group commit never holds a request on the database: pending after a failure, during the backoff, or after waitMs; the items are written later', async () => {
    const clock = new SimClock(0);
    const s = sink({ failTimes: 1 });
    const w = new BatchWriter<number>({ clock, write: s.write, flushMs: 60_000, retryMs: 1000, waitMs: 500 });
    expect(await w.addAndWait(1)).toBe('pending'); // its first attempt failed
    expect(await w.addAndWait(2)).toBe('pending'); // backing off: answered at once
    expect(w.stats()).toMatchObject({ queued: 2, errors: 1, unconfirmed: 2 });
    await w.idle(); // the failed attempt has armed its retry
    clock.advance(1000);
    await w.idle();
    expect(s.all()).toEqual([1, 2]);

    // A write that hangs: the waiter is answered after waitMs, the write still lands.
    let release: (() => void) | null = null;
    const slow = new BatchWriter<number>({ clock, waitMs: 500, write: () => new Promise<void>((r) => (release = r)) });
    const p = slow.addAndWait(7);
    await settle();
    clock.advance(499);
    let outcome: string | null = null;
    void p.then((o) => (outcome = o));
    await settle();
    expect(outcome).toBeNull();
    clock.advance(1);
    expect(await p).toBe('pending');
    release!();
    await slow.idle();
    expect(slow.stats()).toMatchObject({ written: 1, unconfirmed: 1 });
    await slow.close();
    expect(await slow.addAndWait(8)).toBe('dropped');
    await w.close();
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('writes everything on close, in batches, in order, and leaves no timer behind', async () => {
    const clock = new SimClock(0);
    const s = sink();
    const w = new BatchWriter<number>({ clock, write: s.write, maxBatch: 4, flushMs: 60_000 });
    for (let i = 0; i < 10; i++) w.add(i);
    await w.close();
    expect(s.all()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(s.batches.every((b) => b.length <= 4)).toBe(true);
    expect(clock.nextTimerAt()).toBeUndefined();
    // Closed: further items are refused and counted.
    expect(w.add(99)).toBe(false);
    expect(w.stats()).toMatchObject({ queued: 0, written: 10, dropped: 1 });
  });

  it('bounds the queue: past maxQueue new items are dropped, counted and reported, never blocking', async () => {
    const clock = new SimClock(0);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const written: number[] = [];
    const drops: Array<[number, string]> = [];
    const w = new BatchWriter<number>({
      clock,
      maxBatch: 2,
      maxQueue: 5,
      write: async (b) => {
        await gate; // the database is slow
        written.push(...b);
      },
      onDrop: (n, why) => drops.push([n, why]),
    });
    const accepted = Array.from({ length: 8 }, (_, i) => w.add(i));
    expect(accepted).toEqual([true, true, true, true, true, false, false, false]);
    expect(w.stats().dropped).toBe(3);
    expect(drops).toEqual([[1, 'overflow'], [1, 'overflow'], [1, 'overflow']]);
    release();
    await w.close();
    expect(written).toEqual([0, 1, 2, 3, 4]);
  });

  it('retries a failed batch after a backoff on the clock, and loses nothing', async () => {
    const clock = new SimClock(0);
    const s = sink({ failTimes: 2 });
    const errors: Array<{ attempt: number; dropped: boolean }> = [];
    const w = new BatchWriter<number>({ clock, write: s.write, maxBatch: 2, flushMs: 100, retryMs: 1000, onError: (_e, i) => errors.push(i) });
    w.add(1);
    w.add(2); // full batch: first attempt fails
    await w.flush(); // second attempt, fails too
    expect(s.batches).toEqual([]);
    expect(errors).toEqual([
      { size: 2, attempt: 1, dropped: false },
      { size: 2, attempt: 2, dropped: false },
    ]);
    w.add(3);
    // Backoff doubles: 2 s after the second failure.
    clock.advance(1999);
    await settle();
    expect(s.batches).toEqual([]);
    clock.advance(1);
    await settle();
    await settle();
    await w.flush();
    expect(s.all()).toEqual([1, 2, 3]);
    expect(w.stats()).toMatchObject({ written: 3, failed: 0, errors: 2, queued: 0 });
    await w.close();
  });

  it('gives a batch up after maxAttempts, so one bad batch cannot wedge the queue', async () => {
    const clock = new SimClock(0);
    const written: number[][] = [];
    const w = new BatchWriter<number>({
      clock,
      maxBatch: 2,
      maxAttempts: 3,
      write: async (b) => {
        if (b.includes(666)) throw new Error('poison');
        written.push(b);
      },
    });
    w.add(666);
    w.add(1);
    w.add(2);
    await w.close();
    expect(written).toEqual([[2]]);
    expect(w.stats()).toMatchObject({ failed: 2, written: 1, errors: 3 });
  });

  it('writes every accepted item exactly once, in order, whatever the interleaving of adds, time and failures', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant<'add'>('add'), fc.integer({ min: 1, max: 3000 }), fc.constant<'flush'>('flush')), { maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 0, max: 3 }),
        async (ops, maxBatch, failTimes) => {
          const clock = new SimClock(0);
          const s = sink({ failTimes });
          const w = new BatchWriter<number>({ clock, write: s.write, maxBatch, flushMs: 500, retryMs: 100, maxAttempts: 10 });
          const accepted: number[] = [];
          let n = 0;
          for (const op of ops) {
            if (op === 'add') {
              if (w.add(n)) accepted.push(n);
              n++;
            } else if (op === 'flush') await w.flush();
            else {
              clock.advance(op);
              await settle();
            }
          }
          await w.close();
          expect(s.all()).toEqual(accepted);
          expect(clock.nextTimerAt()).toBeUndefined();
        },
      ),
      { numRuns: 150 },
    );
  });
});
