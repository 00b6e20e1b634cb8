import type { ReplyIntent } from '../../types.ts';
import { HASH_BITS, type Features } from './features.ts';

/**
 * The intent model as stored: multinomial logistic regression over hashed features, only the
 * features that carry weight, weights quantised to 16-bit integers (base64) to keep the file small,
 * and the temperature fitted on the validation split that turns scores into calibrated probabilities.
 */

export const INTENTS: readonly ReplyIntent[] = ['interested', 'not_interested', 'unsubscribe', 'wrong_person', 'referral', 'question', 'neutral'];

export interface StoredModel {
  format: 'cadenza-intent-v1';
  hashBits: number;
  classes: ReplyIntent[];
  temperature: number;
  bias: number[];
  /** Weight = int16 × scale. */
  scale: number;
  /** Feature indices, ascending, as base64 of little-endian uint32. */
  indices: string;
  /** For each index, one int16 per class (class order as `classes`), base64 little-endian. */
  weights: string;
  /** How it was made, for people reading the file. */
  trainedOn: { examples: number; seed: number; l2: number; epochs: number };
}

/** Dense form for scoring: weight of feature f for class c at f * K + c. */
export interface LoadedModel {
  classes: ReplyIntent[];
  temperature: number;
  bias: Float64Array;
  weights: Map<number, Float32Array>;
}

export function scores(model: Pick<LoadedModel, 'bias' | 'weights' | 'classes'>, x: Features): Float64Array {
  const s = Float64Array.from(model.bias);
  for (const [f, v] of x) {
    const w = model.weights.get(f);
    if (!w) continue;
    for (let c = 0; c < s.length; c++) s[c]! += w[c]! * v;
  }
  return s;
}

export function softmax(s: Float64Array, temperature = 1): Float64Array {
  let max = -Infinity;
  for (const v of s) max = Math.max(max, v / temperature);
  const p = new Float64Array(s.length);
  let sum = 0;
  for (let i = 0; i < s.length; i++) sum += p[i] = Math.exp(s[i]! / temperature - max);
  for (let i = 0; i < s.length; i++) p[i]! /= sum;
  return p;
}

export function predict(model: LoadedModel, x: Features): { index: number; probabilities: Float64Array } {
  const p = softmax(scores(model, x), model.temperature);
  let index = 0;
  for (let i = 1; i < p.length; i++) if (p[i]! > p[index]!) index = i;
  return { index, probabilities: p };
}

export function encodeModel(
  m: { classes: ReplyIntent[]; temperature: number; bias: ArrayLike<number>; weights: Map<number, ArrayLike<number>> },
  trainedOn: StoredModel['trainedOn'],
): StoredModel {
  const K = m.classes.length;
  const indices = [...m.weights.keys()].sort((a, b) => a - b);
  let maxAbs = 0;
  for (const w of m.weights.values()) for (let c = 0; c < K; c++) maxAbs = Math.max(maxAbs, Math.abs(w[c]!));
  const scale = maxAbs / 32767 || 1;
  // Little-endian whatever the machine, so the file reads the same everywhere.
  const idx = Buffer.alloc(indices.length * 4);
  const q = Buffer.alloc(indices.length * K * 2);
  indices.forEach((f, i) => {
    idx.writeUInt32LE(f, i * 4);
    const w = m.weights.get(f)!;
    for (let c = 0; c < K; c++) q.writeInt16LE(Math.round(w[c]! / scale), (i * K + c) * 2);
  });
  return {
    format: 'cadenza-intent-v1',
    hashBits: HASH_BITS,
    classes: m.classes,
    temperature: Number(m.temperature.toFixed(4)),
    bias: Array.from(m.bias, (b) => Number(b.toFixed(5))),
    scale,
    indices: idx.toString('base64'),
    weights: q.toString('base64'),
    trainedOn,
  };
}

export function decodeModel(stored: StoredModel): LoadedModel {
  if (stored.format !== 'cadenza-intent-v1' || stored.hashBits !== HASH_BITS) throw new Error(`intent model: unsupported format ${stored.format}/${stored.hashBits}`);
  const K = stored.classes.length;
  const idxBuf = Buffer.from(stored.indices, 'base64');
  const wBuf = Buffer.from(stored.weights, 'base64');
  const weights = new Map<number, Float32Array>();
  for (let i = 0; i < idxBuf.length / 4; i++) {
    const w = new Float32Array(K);
    for (let c = 0; c < K; c++) w[c] = wBuf.readInt16LE((i * K + c) * 2) * stored.scale;
    weights.set(idxBuf.readUInt32LE(i * 4), w);
  }
  return { classes: stored.classes, temperature: stored.temperature, bias: Float64Array.from(stored.bias), weights };
}
