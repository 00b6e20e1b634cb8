/**
 * How well a classifier does on labelled examples: accuracy, macro-F1, recall per class, and the
 * expected calibration error (top-label confidence against accuracy in equal-width bins).
 */

export interface Prediction {
  actual: number;
  predicted: number;
  /** Probability the model gave its predicted class. */
  confidence: number;
}

export interface Report {
  n: number;
  accuracy: number;
  macroF1: number;
  recall: number[];
  ece: number;
}

const ECE_BINS = 10;

export function evaluate(predictions: Prediction[], classes: number): Report {
  const n = predictions.length;
  const tp = new Array<number>(classes).fill(0);
  const actual = new Array<number>(classes).fill(0);
  const predicted = new Array<number>(classes).fill(0);
  for (const p of predictions) {
    actual[p.actual]!++;
    predicted[p.predicted]!++;
    if (p.actual === p.predicted) tp[p.actual]!++;
  }
  const recall = tp.map((t, c) => (actual[c] ? t / actual[c]! : 0));
  const f1 = tp.map((t, c) => {
    const prec = predicted[c] ? t / predicted[c]! : 0;
    const rec = recall[c]!;
    return prec + rec > 0 ? (2 * prec * rec) / (prec + rec) : 0;
  });
  const bins = Array.from({ length: ECE_BINS }, () => ({ n: 0, conf: 0, correct: 0 }));
  for (const p of predictions) {
    const b = bins[Math.min(ECE_BINS - 1, Math.floor(p.confidence * ECE_BINS))]!;
    b.n++;
    b.conf += p.confidence;
    if (p.actual === p.predicted) b.correct++;
  }
  const ece = bins.reduce((s, b) => s + (b.n ? (b.n / n) * Math.abs(b.correct / b.n - b.conf / b.n) : 0), 0);
  return { n, accuracy: tp.reduce((a, b) => a + b, 0) / n, macroF1: f1.reduce((a, b) => a + b, 0) / classes, recall, ece };
}
