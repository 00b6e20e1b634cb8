import { describe, expect, it } from 'vitest';
import { assessBounceRate } from './bounce-rate.ts';

describe('bounce classifier', () => {
  it('returns a verdict, a confidence and a reason', () => {
    expect(assessBounceRate({ sends: 100, bounces: 2 })).toEqual({ verdict: 'ok', confidence: 1, reason: '2 bounces in the last 100 sends (2.0%), below 3.0%' });
    expect(assessBounceRate({ sends: 100, bounces: 3 }).verdict).toBe('warning');
    expect(assessBounceRate({ sends: 100, bounces: 5 }).verdict).toBe('pause');
    expect(assessBounceRate({ sends: 50, bounces: 3 })).toMatchObject({ verdict: 'pause', confidence: 0.5 });
    expect(assessBounceRate({ sends: 10, bounces: 4 }).verdict).toBe('ok');
    expect(assessBounceRate({ sends: 10, bounces: 5 }).verdict).toBe('pause');
    expect(assessBounceRate({ sends: 0, bounces: 0 })).toMatchObject({ verdict: 'ok', confidence: 0 });
  });
});
