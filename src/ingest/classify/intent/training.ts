import type { ReplyIntent } from '../../types.ts';
import { featurize, type Features } from './features.ts';
import { evaluate, type Prediction, type Report } from './metrics.ts';
import { INTENTS, predict, scores, softmax, type LoadedModel } from './model.ts';
import type { Reply, Split } from './dataset.ts';

/**
 * Fitting the intent model: full-batch gradient descent with momentum on the L2-regularised
 * multinomial log-loss (convex, so no seed is needed and the result is the same on every run),
 * the L2 strength chosen on the validation split, then a temperature fitted on that split so that
 * the confidence the ladder reads is a calibrated probability.
 */

export interface TrainOptions {
  l2Grid: number[];
  epochs: number;
  learningRate: number;
  momentum: number;
}

export const DEFAULTS: TrainOptions = { l2Grid: [3e-5, 1e-4, 3e-4, 1e-3], epochs: 500, learningRate: 2, momentum: 0.9 };

interface Encoded {
  x: Features;
  y: number;
}

const encode = (replies: Reply[]): Encoded[] => replies.map((r) => ({ x: featurize(r.text), y: INTENTS.indexOf(r.intent) }));

function fit(train: Encoded[], l2: number, o: TrainOptions): LoadedModel {
  const K = INTENTS.length;
  // Only features seen in training can get weight; give each a row.
  const row = new Map<number, number>();
  for (const e of train) for (const f of e.x.keys()) if (!row.has(f)) row.set(f, row.size);
  const W = new Float64Array(row.size * K);
  const V = new Float64Array(row.size * K);
  const b = new Float64Array(K);
  const vb = new Float64Array(K);
  const G = new Float64Array(row.size * K);
  const gb = new Float64Array(K);
  const rows = train.map((e) => [...e.x].map(([f, v]) => [row.get(f)!, v] as const));
  const n = train.length;
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    G.fill(0);
    gb.fill(0);
    for (let i = 0; i < n; i++) {
      const s = Float64Array.from(b);
      for (const [r, v] of rows[i]!) for (let c = 0; c < K; c++) s[c]! += W[r * K + c]! * v;
      const p = softmax(s);
      p[train[i]!.y]! -= 1;
      for (let c = 0; c < K; c++) gb[c]! += p[c]! / n;
      for (const [r, v] of rows[i]!) for (let c = 0; c < K; c++) G[r * K + c]! += (p[c]! * v) / n;
    }
    for (let j = 0; j < W.length; j++) {
      V[j] = o.momentum * V[j]! - o.learningRate * (G[j]! + l2 * W[j]!);
      W[j]! += V[j]!;
    }
    for (let c = 0; c < K; c++) {
      vb[c] = o.momentum * vb[c]! - o.learningRate * gb[c]!;
      b[c]! += vb[c]!;
    }
  }
  const weights = new Map<number, Float32Array>();
  for (const [f, r] of row) weights.set(f, Float32Array.from(W.subarray(r * K, r * K + K)));
  return { classes: [...INTENTS], temperature: 1, bias: b, weights };
}

function nll(model: LoadedModel, data: Encoded[], temperature: number): number {
  let s = 0;
  for (const e of data) s -= Math.log(Math.max(1e-12, softmax(scores(model, e.x), temperature)[e.y]!));
  return s / data.length;
}

/** Golden-section search over 1/T, in which the log-loss is convex. */
function fitTemperature(model: LoadedModel, data: Encoded[]): number {
  let lo = 0.05;
  let hi = 20;
  const phi = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < 60; i++) {
    const a = hi - phi * (hi - lo);
    const c = lo + phi * (hi - lo);
    if (nll(model, data, 1 / a) < nll(model, data, 1 / c)) hi = c;
    else lo = a;
  }
  return 1 / ((lo + hi) / 2);
}

export function evaluateModel(model: LoadedModel, replies: Reply[]): Report {
  const preds: Prediction[] = replies.map((r) => {
    const { index, probabilities } = predict(model, featurize(r.text));
    return { actual: model.classes.indexOf(r.intent as ReplyIntent), predicted: index, confidence: probabilities[index]! };
  });
  return evaluate(preds, model.classes.length);
}

export interface TrainResult {
  model: LoadedModel;
  l2: number;
  validation: Report;
  test: Report;
  /** Validation accuracy for each L2 strength tried. */
  tried: Array<{ l2: number; accuracy: number; nll: number }>;
}

export function trainIntentModel(split: Split, options: TrainOptions = DEFAULTS): TrainResult {
  const train = encode(split.train);
  const validation = encode(split.validation);
  let best: { model: LoadedModel; l2: number; accuracy: number; nll: number } | null = null;
  const tried: TrainResult['tried'] = [];
  for (const l2 of options.l2Grid) {
    const model = fit(train, l2, options);
    model.temperature = fitTemperature(model, validation);
    const accuracy = evaluateModel(model, split.validation).accuracy;
    const loss = nll(model, validation, model.temperature);
    tried.push({ l2, accuracy, nll: loss });
    if (!best || accuracy > best.accuracy || (accuracy === best.accuracy && loss < best.nll)) best = { model, l2, accuracy, nll: loss };
  }
  return { model: best!.model, l2: best!.l2, validation: evaluateModel(best!.model, split.validation), test: evaluateModel(best!.model, split.test), tried };
}
