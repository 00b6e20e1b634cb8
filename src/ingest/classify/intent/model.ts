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
  const idx = new Uint32Array(indices);
  const q = new Int16Array(indices.length * K);
  indices.forEach((f, i) => {
    const w = m.weights.get(f)!;
    for (let c = 0; c < K; c++) q[i * K + c] = Math.round(w[c]! / scale);
  });
  return {
    format: 'cadenza-intent-v1',
    hashBits: HASH_BITS,
    classes: m.classes,
    temperature: Number(m.temperature.toFixed(4)),
    bias: Array.from(m.bias, (b) => Number(b.toFixed(5))),
    scale,
    indices: Buffer.from(idx.buffer).toString('base64'),
    weights: Buffer.from(q.buffer).toString('base64'),
    trainedOn,
  };
}

export function decodeModel(stored: StoredModel): LoadedModel {
  if (stored.format !== 'cadenza-intent-v1' || stored.hashBits !== HASH_BITS) throw new Error(`intent model: unsupported format ${stored.format}/${stored.hashBits}`);
  const K = stored.classes.length;
  const idxBuf = Buffer.from(stored.indices, 'base64');
  const wBuf = Buffer.from(stored.weights, 'base64');
  const idx = new Uint32Array(idxBuf.buffer.slice(idxBuf.byteOffset, idxBuf.byteOffset + idxBuf.byteLength));
  const q = new Int16Array(wBuf.buffer.slice(wBuf.byteOffset, wBuf.byteOffset + wBuf.byteLength));
  const weights = new Map<number, Float32Array>();
  idx.forEach((f, i) => {
    const w = new Float32Array(K);
    for (let c = 0; c < K; c++) w[c] = q[i * K + c]! * stored.scale;
    weights.set(f, w);
  });
  return { classes: stored.classes, temperature: stored.temperature, bias: Float64Array.from(stored.bias), weights };
}
