import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { chiSquareSurvival } from './chi-square.ts';
import { initialState, logMixtureRatio, msprtLook, type MsprtState } from './msprt.ts';
import { normalQuantile } from './normal.ts';
import { sampleRatioMismatch } from './srm.ts';
import { wilson } from './wilson.ts';

describe('normal quantile', () => {
  it('matches tabulated values', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.995)).toBeCloseTo(2.575829, 5);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 9);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 5);
  });
});

describe('Wilson interval', () => {
  it('matches the published values (Brown, Cai & DasGupta 2001; Newcombe 1998)', () => {
    const a = wilson(0, 10);
    expect(a.low).toBe(0);
    expect(a.high).toBeCloseTo(0.2775, 4);
    const b = wilson(5, 10);
    expect(b.low).toBeCloseTo(0.2366, 4);
    expect(b.high).toBeCloseTo(0.7634, 4);
    // Newcombe's example 81/263.
    const c = wilson(81, 263);
    expect(c.low).toBeCloseTo(0.2553, 4);
    expect(c.high).toBeCloseTo(0.3662, 4);
  });

  it('is the whole range with no trials', () => {
    expect(wilson(0, 0)).toEqual({ rate: null, low: 0, high: 1 });
  });
});

describe('chi-square upper tail', () => {
  it('matches the tables', () => {
    expect(chiSquareSurvival(3.841459, 1)).toBeCloseTo(0.05, 6);
    expect(chiSquareSurvival(5.991465, 2)).toBeCloseTo(0.05, 6);
    expect(chiSquareSurvival(18.307038, 10)).toBeCloseTo(0.05, 6);
    expect(chiSquareSurvival(10.827566, 1)).toBeCloseTo(0.001, 7);
    expect(chiSquareSurvival(0, 3)).toBe(1);
  });
});

describe('sample-ratio mismatch', () => {
  it('passes counts that fit the weights and alarms on ones that do not', () => {
    expect(sampleRatioMismatch([5010, 4990], [1, 1]).mismatch).toBe(false);
    expect(sampleRatioMismatch([2510, 7490], [1, 3]).mismatch).toBe(false);
    const bad = sampleRatioMismatch([5300, 4700], [1, 1]);
    expect(bad.mismatch).toBe(true);
    expect(bad.pValue).toBeLessThan(0.001);
    // An arm paused at weight 0 is left out of the check.
    expect(sampleRatioMismatch([5000, 4990, 7], [1, 1, 0]).mismatch).toBe(false);
    expect(sampleRatioMismatch([0, 0], [1, 1]).mismatch).toBe(false);
  });
});

describe('mSPRT', () => {
  it("is the paper's Λ_n for n pairs (Johari et al., eq. for normal data with V = 2σ²)", () => {
    const n = 400;
    const V = 0.05 * 0.95 + 0.08 * 0.92;
    const theta = 0.03;
    const tau = 0.03;
    const paper = Math.sqrt(V / (V + n * tau * tau)) * Math.exp((n * n * tau * tau * theta * theta) / (2 * V * (V + n * tau * tau)));
    expect(Math.exp(logMixtureRatio(theta, V / n, tau))).toBeCloseTo(paper, 10);
  });

  it('gives no evidence before there is any outcome', () => {
    const s = msprtLook(initialState, { n: 300, x: 0 }, { n: 300, x: 0 }, { alpha: 0.05 });
    expect(s.pValue).toBe(1);
  });

  it('keeps a p-value that never rises and a confidence sequence that never widens, and covers the truth', () => {
    const random = seededRandom('msprt-cs');
    let misses = 0;
    const runs = 200;
    for (let r = 0; r < runs; r++) {
      let s: MsprtState = initialState;
      const a = { n: 0, x: 0 };
      const b = { n: 0, x: 0 };
      let missed = false;
      for (let look = 0; look < 40; look++) {
        for (let j = 0; j < 50; j++) {
          a.n++;
          b.n++;
          if (random.next() < 0.05) a.x++;
          if (random.next() < 0.08) b.x++;
        }
        const next = msprtLook(s, { ...a }, { ...b }, { alpha: 0.05 });
        expect(next.pValue).toBeLessThanOrEqual(s.pValue);
        expect(next.low).toBeGreaterThanOrEqual(s.low);
        expect(next.high).toBeLessThanOrEqual(s.high);
        s = next;
        if (look >= 3 && (s.low > 0.03 || s.high < 0.03)) missed = true;
      }
      if (missed) misses++;
    }
    // Always-valid: the true difference leaves the sequence at any look in at most α of runs.
    expect(misses / runs).toBeLessThanOrEqual(0.05);
  });
});
