import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/common/random.ts';
import { parseMailSafe } from '../../src/ingest/parse/parse-mail.ts';
import { planIteration } from './campaign.ts';
import { heapUsedAfterGc } from './heap.ts';
import { mutate, mutators } from './mutators.ts';
import { HOSTILE_PREFIX, loadSeeds } from './seeds.ts';
import { runTarget } from './target.ts';

/**
 * The short fuzzing run of `npm test` (the long one: `npm run fuzz -- --iterations N`). Real mail
 * from the corpora, mutated, through parse → reply text → the classifier's rungs. fast-check
 * drives it with a fixed seed: a failure prints the seed and path that replay it.
 * Budgets are wall-clock and generous: this runs on a loaded 2-core machine next to other tests.
 */
const FC_SEED = 20261129;
const BUDGET_MS = 5_000;
const seeds = loadSeeds();

describe('fuzzing the ingestion parsers with mutated real mail', () => {
  it('never throws and finishes each message within the budget', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (i) => {
        const plan = planIteration(FC_SEED, i, seeds.length, 0);
        const input = mutate(seeds[plan.seedIndex]!.bytes, plan.mutations, seededRandom(`${FC_SEED}:${i}:mutate`));
        const r = await runTarget(input);
        expect(r.ms, `${seeds[plan.seedIndex]!.name} with ${plan.mutations.join('+')}`).toBeLessThan(BUDGET_MS);
      }),
      { seed: FC_SEED, numRuns: 150, endOnFailure: true },
    );
  }, 120_000);

  it('every hostile shape, mutated, within the budget', async () => {
    const hostile = seeds.filter((x) => x.name.startsWith(HOSTILE_PREFIX));
    expect(hostile.length).toBeGreaterThan(20);
    for (const [k, s] of hostile.entries()) {
      const names = Object.keys(mutators).filter((n) => n !== 'hugeBody');
      const mutation = names[k % names.length]!;
      for (const input of [s.bytes, mutate(s.bytes, [mutation], seededRandom(`${FC_SEED}:${s.name}`))]) {
        const r = await runTarget(input);
        expect(r.ms, `${s.name} with ${mutation}`).toBeLessThan(BUDGET_MS);
      }
    }
  }, 120_000);

  it('every mutation on its own, on every kind of seed', async () => {
    const rnd = seededRandom(FC_SEED);
    for (const [name, mutator] of Object.entries(mutators)) {
      if (name === 'hugeBody') continue;
      for (const s of [seeds[0]!, seeds[Math.floor(seeds.length / 2)]!, seeds[seeds.length - 1]!]) {
        const r = await runTarget(mutator(s.bytes, rnd.fork(`${name}:${s.name}`)));
        expect(r.ms, `${name} on ${s.name}`).toBeLessThan(BUDGET_MS);
      }
    }
  }, 120_000);

  it('a 10 MB body is parsed or quarantined within a bound', async () => {
    const input = mutate(seeds[0]!.bytes, ['hugeBody'], seededRandom(FC_SEED));
    expect(input.byteLength).toBeGreaterThan(10 * 1024 * 1024);
    const r = await runTarget(input);
    expect(r.ms).toBeLessThan(30_000);
  }, 60_000);

  it('quarantines hostile shapes with their reason', async () => {
    const rnd = seededRandom(FC_SEED);
    const deep = await parseMailSafe(mutators.deepNesting!(seeds[0]!.bytes, rnd));
    expect(deep.ok || deep.reason === 'nesting_too_deep').toBe(true);
    const nested = await parseMailSafe(mutate(seeds[0]!.bytes, ['deepNesting'], seededRandom(1)));
    expect(nested).toMatchObject({ ok: false, reason: 'nesting_too_deep' });
  });

  it('memory stays bounded over many messages', async () => {
    const before = heapUsedAfterGc();
    if (before === null) return expect.fail('gc is not reachable: cannot measure the heap');
    for (let i = 0; i < 120; i++) {
      const plan = planIteration(FC_SEED + 1, i, seeds.length, 0);
      await runTarget(mutate(seeds[plan.seedIndex]!.bytes, plan.mutations, seededRandom(`${FC_SEED + 1}:${i}`)));
    }
    const after = heapUsedAfterGc()!;
    const growthMB = (after - before) / 2 ** 20;
    console.log(`heap growth over 120 mutated messages: ${growthMB.toFixed(1)} MB`);
    // Caches that fill once (regexes, the intent model) stay well under this; a leak of even a
    // few KB per message would not.
    expect(growthMB).toBeLessThan(48);
  }, 120_000);

  it('every message of the corpora parses (none quarantined)', async () => {
    const bad: string[] = [];
    for (const s of seeds.filter((x) => !x.name.startsWith(HOSTILE_PREFIX))) {
      const r = await parseMailSafe(s.bytes);
      if (!r.ok) bad.push(`${s.name}: ${r.reason}`);
    }
    expect(bad).toEqual([]);
  }, 60_000);
});
