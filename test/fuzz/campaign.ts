import { seededRandom } from '../../src/common/random.ts';
import { mutate, mutatorNames } from './mutators.ts';
import type { loadSeeds } from './seeds.ts';
import { runTarget } from './target.ts';

/**
 * A fuzzing campaign: iteration i takes seed message (i mod seeds), a chain of 1–3 mutations
 * drawn from seededRandom(`${seed}:${i}`), and runs the target. Everything derives from (seed, i),
 * so any failure replays with `npm run fuzz -- --seed S --only I`.
 */
export interface CampaignOptions {
  seed: number;
  iterations: number;
  /** Run only this iteration (replay). */
  only?: number;
  /** Per-message wall-clock budget, ms; 10 MB bodies get `hugeBudgetMs`. */
  budgetMs: number;
  hugeBudgetMs: number;
  /** Chance of the hugeBody mutation (it takes seconds; the short run keeps it rare). */
  hugeRate: number;
  onProgress?: (done: number, stats: CampaignStats) => void;
}

export interface CampaignFailure {
  iteration: number;
  seedFile: string;
  mutations: string[];
  problem: string;
}

export interface CampaignStats {
  iterations: number;
  quarantined: Record<string, number>;
  maxMs: number;
  maxMsIteration: number;
  totalMs: number;
  failures: CampaignFailure[];
}

export function planIteration(seed: number, i: number, seedCount: number, hugeRate: number): { seedIndex: number; mutations: string[] } {
  const rnd = seededRandom(`${seed}:${i}`);
  const names = mutatorNames.filter((n) => n !== 'hugeBody');
  const mutations = Array.from({ length: rnd.int(1, 3) }, () => names[rnd.int(0, names.length - 1)]!);
  if (rnd.next() < hugeRate) mutations.push('hugeBody');
  return { seedIndex: i % seedCount, mutations };
}

export async function runCampaign(seeds: ReturnType<typeof loadSeeds>, o: CampaignOptions): Promise<CampaignStats> {
  const stats: CampaignStats = { iterations: 0, quarantined: {}, maxMs: 0, maxMsIteration: -1, totalMs: 0, failures: [] };
  const first = o.only ?? 0;
  const last = o.only !== undefined ? o.only + 1 : o.iterations;
  for (let i = first; i < last; i++) {
    const plan = planIteration(o.seed, i, seeds.length, o.hugeRate);
    const s = seeds[plan.seedIndex]!;
    const input = mutate(s.bytes, plan.mutations, seededRandom(`${o.seed}:${i}:mutate`));
    const fail = (problem: string) => stats.failures.push({ iteration: i, seedFile: s.name, mutations: plan.mutations, problem });
    try {
      const r = await runTarget(input);
      stats.totalMs += r.ms;
      if (r.ms > stats.maxMs) {
        stats.maxMs = r.ms;
        stats.maxMsIteration = i;
      }
      if (r.quarantined) stats.quarantined[r.quarantined] = (stats.quarantined[r.quarantined] ?? 0) + 1;
      const budget = plan.mutations.includes('hugeBody') ? o.hugeBudgetMs : o.budgetMs;
      if (r.ms > budget) fail(`took ${Math.round(r.ms)} ms (budget ${budget} ms)`);
    } catch (e) {
      fail(`threw: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    }
    stats.iterations++;
    o.onProgress?.(stats.iterations, stats);
  }
  return stats;
}
