import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SPLIT_SEED, loadReplies, splitReplies } from './dataset.ts';
import type { Report } from './metrics.ts';
import { INTENTS, encodeModel } from './model.ts';
import { DEFAULTS, trainIntentModel } from './training.ts';

/**
 * `npm run train:intent`: trains the reply-intent model on data/replies.jsonl's training split,
 * prints its figures on the held-out test split, and writes model.json beside this file.
 */

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function print(name: string, r: Report): void {
  console.log(`${name} (${r.n} replies): accuracy ${pct(r.accuracy)}, macro-F1 ${pct(r.macroF1)}, ECE ${r.ece.toFixed(3)}`);
  console.log(`  recall: ${INTENTS.map((c, i) => `${c} ${pct(r.recall[i]!)}`).join(', ')}`);
}

const replies = loadReplies();
const split = splitReplies(replies);
console.log(`replies: ${replies.length} (train ${split.train.length}, validation ${split.validation.length}, test ${split.test.length}; seed ${SPLIT_SEED})`);
const result = trainIntentModel(split);
for (const t of result.tried) console.log(`  l2 ${t.l2}: validation accuracy ${pct(t.accuracy)}, log-loss ${t.nll.toFixed(3)}`);
console.log(`chosen l2 ${result.l2}, temperature ${result.model.temperature.toFixed(3)}, ${result.model.weights.size} features with weight`);
print('validation', result.validation);
print('test', result.test);

const stored = encodeModel(result.model, { examples: split.train.length, seed: SPLIT_SEED, l2: result.l2, epochs: DEFAULTS.epochs });
const out = fileURLToPath(new URL('./model.json', import.meta.url));
writeFileSync(out, `${JSON.stringify(stored)}\n`);
console.log(`wrote ${out.slice(out.indexOf('src/'))} (${(JSON.stringify(stored).length / 1024).toFixed(0)} KiB)`);
