import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { seededRandom } from '../../../common/random.ts';
import { INTENTS } from './model.ts';

/**
 * The labelled replies kept in the repository (data/replies.jsonl) and their one split: stratified
 * by intent, shuffled from a fixed seed, so the trainer and the test that checks the committed model
 * agree on which replies were never trained on.
 */

export const SPLIT_SEED = 20261129;
const FRACTIONS = { validation: 0.15, test: 0.15 };

const row = z.object({ text: z.string().min(1), intent: z.enum(INTENTS as [string, ...string[]]) });
export type Reply = { text: string; intent: (typeof INTENTS)[number] };

export function loadReplies(file = new URL('./data/replies.jsonl', import.meta.url)): Reply[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const r = row.safeParse(JSON.parse(l));
      if (!r.success) throw new Error(`replies.jsonl line ${i + 1}: ${r.error.issues[0]?.message}`);
      return r.data as Reply;
    });
}

export interface Split {
  train: Reply[];
  validation: Reply[];
  test: Reply[];
}

export function splitReplies(replies: Reply[], seed = SPLIT_SEED): Split {
  const rnd = seededRandom(seed);
  const out: Split = { train: [], validation: [], test: [] };
  for (const intent of INTENTS) {
    const group = replies.filter((r) => r.intent === intent);
    for (let i = group.length - 1; i > 0; i--) {
      const j = rnd.int(0, i);
      [group[i], group[j]] = [group[j]!, group[i]!];
    }
    const nTest = Math.round(group.length * FRACTIONS.test);
    const nVal = Math.round(group.length * FRACTIONS.validation);
    out.test.push(...group.slice(0, nTest));
    out.validation.push(...group.slice(nTest, nTest + nVal));
    out.train.push(...group.slice(nTest + nVal));
  }
  return out;
}
