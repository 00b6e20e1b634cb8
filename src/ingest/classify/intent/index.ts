import { readFileSync } from 'node:fs';
import type { ReplyIntent } from '../../types.ts';
import { featurize } from './features.ts';
import { decodeModel, predict, type LoadedModel, type StoredModel } from './model.ts';
import { unsubscribeRequest } from './unsubscribe.ts';

export { unsubscribeRequest } from './unsubscribe.ts';

/**
 * The intent of a human reply. An explicit opt-out phrase decides first (a rule, not a guess:
 * missing one is the costly error); otherwise the trained model's most likely intent, with its
 * calibrated probability as the confidence. The model is read from model.json once, on first use.
 */

export interface IntentResult {
  intent: ReplyIntent;
  confidence: number;
  reason: string;
}

let model: LoadedModel | null = null;

export function intentModel(): LoadedModel {
  model ??= decodeModel(JSON.parse(readFileSync(new URL('./model.json', import.meta.url), 'utf8')) as StoredModel);
  return model;
}

/**
 * A reply's intent is in its opening: the model reads at most this many characters, so that a
 * pasted megabyte costs milliseconds, not a second (the fuzzer found 1.1 s on 1.2 MB).
 */
const MAX_INTENT_CHARS = 4000;

export function classifyIntent(fullText: string): IntentResult {
  const newText = fullText.length > MAX_INTENT_CHARS ? fullText.slice(0, MAX_INTENT_CHARS) : fullText;
  const optOut = unsubscribeRequest(newText);
  if (optOut) return { intent: 'unsubscribe', confidence: optOut.confidence, reason: optOut.reason };
  if (!newText.trim()) return { intent: 'neutral', confidence: 0, reason: 'empty reply' };
  const m = intentModel();
  const { index, probabilities } = predict(m, featurize(newText));
  const ranked = [...probabilities.keys()].sort((a, b) => probabilities[b]! - probabilities[a]!);
  const runnerUp = ranked[1]!;
  return {
    intent: m.classes[index]!,
    confidence: Number(probabilities[index]!.toFixed(4)),
    reason: `model: ${m.classes[index]} ${probabilities[index]!.toFixed(2)} (next ${m.classes[runnerUp]} ${probabilities[runnerUp]!.toFixed(2)})`,
  };
}
