import { describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { isValidZone } from '../calendar/index.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { AcceleratedClock } from './demo-clock.ts';
import { generateLeads, leadsCsv } from './people.ts';
import { planPersonas, personaShares } from './personas.ts';

describe('AcceleratedClock', () => {
  it('runs `rate` times faster than the clock under it, timers included', () => {
    const real = new SimClock(1_000_000);
    const c = new AcceleratedClock(Date.UTC(2026, 10, 30, 9), 3600, real);
    const fired: number[] = [];
    c.setTimer(2 * 3_600_000, () => fired.push(c.now()));
    real.advance(1_000);
    expect(c.now()).toBe(Date.UTC(2026, 10, 30, 10));
    expect(fired).toEqual([]);
    real.advance(1_000);
    expect(fired).toEqual([Date.UTC(2026, 10, 30, 11)]);
    expect(c.realMs(15_000)).toBe(15_000 * 3600);
  });

  it('refuses a rate below 1', () => {
    expect(() => new AcceleratedClock(0, 0.5)).toThrow(/at least 1/);
  });
});

describe('demo prospects', () => {
  it('are the same for the same seed, distinct by address, in real zones with their country', () => {
    const a = generateLeads(seededRandom('s'), 400);
    expect(generateLeads(seededRandom('s'), 400)).toEqual(a);
    expect(new Set(a.map((l) => l.email)).size).toBe(400);
    for (const l of a) {
      expect(l.country).toMatch(/^[A-Z]{2}$/);
      if (l.timeZone) expect(isValidZone(l.timeZone)).toBe(true);
      expect(l.email).toMatch(/^[a-z0-9.]+@[a-z0-9.-]+\.example$/);
    }
    expect(new Set(a.map((l) => l.timeZone)).size).toBeGreaterThan(10);
    // Quoting: a company or name with a comma or quote stays one field.
    expect(leadsCsv([{ ...a[0]!, company: 'Smith, "Jones" & Co' }]).split('\n')[1]).toContain('"Smith, ""Jones"" & Co"');
  });

  it('include every kind of reaction even in a small demo, at about the planned shares in a large one', () => {
    const small = planPersonas(seededRandom('p'), 30);
    for (const kind of Object.keys(personaShares)) expect(small.some((p) => p.kind === kind)).toBe(true);
    const large = planPersonas(seededRandom('p'), 1000);
    for (const [kind, share] of Object.entries(personaShares)) expect(large.filter((p) => p.kind === kind).length).toBe(Math.round(share * 1000));
    expect(large.filter((p) => p.kind === 'silent').length).toBeGreaterThan(600);
  });
});
