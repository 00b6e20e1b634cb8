import { describe, expect, it } from 'vitest';
import { loadReplies, splitReplies } from './dataset.ts';
import { decodeModel, encodeModel } from './model.ts';
import { evaluateModel, trainIntentModel } from './training.ts';

describe('intent training', () => {
  const split = splitReplies(loadReplies());

  it('trains deterministically, and the stored form scores as the trained one', () => {
    // A small slice and few epochs: the same procedure as train.ts, fast enough for a unit test.
    const small = { train: split.train.filter((_, i) => i % 6 === 0), validation: split.validation.slice(0, 30), test: split.test.slice(0, 30) };
    const options = { l2Grid: [1e-3], epochs: 15, learningRate: 2, momentum: 0.9 };
    const a = trainIntentModel(small, options);
    const b = trainIntentModel(small, options);
    const meta = { examples: small.train.length, seed: 1, l2: 1e-3, epochs: 15 };
    expect(encodeModel(a.model, meta)).toEqual(encodeModel(b.model, meta));
    const roundTrip = decodeModel(encodeModel(a.model, meta));
    expect(evaluateModel(roundTrip, small.test).accuracy).toBeCloseTo(evaluateModel(a.model, small.test).accuracy, 1);
  });
});
