import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isCadenzaError } from '../common/errors.ts';
import { parseDelay, readDefinitionFile, validateDefinition } from './definition.ts';
import { placeSteps, POSITION_GAP } from './apply-definition.ts';

const base = { key: 'k', name: 'N', steps: [{ key: 'a', type: 'email', subject: 'S', body: 'B' }] };

describe('sequence definitions', () => {
  it('reads the example file', () => {
    const d = readDefinitionFile('examples/outbound.yaml');
    expect(d.key).toBe('outbound');
    expect(d.steps.map((s) => s.kind)).toEqual(['email', 'call', 'manual', 'email']);
    expect(d.steps[0]!.variants.map((v) => v.key)).toEqual(['a', 'b']);
    expect(d.window).toEqual({ kind: 'hours', days: [1, 2, 3, 4, 5], start: '08:30', end: '17:30' });
  });

  it('parses delays in every unit and refuses nonsense with a clear message', () => {
    expect(parseDelay('30 minutes')).toEqual({ amount: 30, unit: 'minutes' });
    expect(parseDelay('4h')).toEqual({ amount: 4, unit: 'hours' });
    expect(parseDelay('3 days')).toEqual({ amount: 3, unit: 'days' });
    expect(parseDelay('2 business days')).toEqual({ amount: 2, unit: 'business_days' });
    expect(parseDelay({ amount: 1, unit: 'business_day' })).toEqual({ amount: 1, unit: 'business_days' });
    expect(parseDelay(2)).toEqual({ amount: 2, unit: 'days' });
    expect(() => parseDelay('soon')).toThrow(/invalid delay "soon"/);
    expect(() => parseDelay('-1 days')).toThrow();
  });

  it('reports every problem at once, with where it is', () => {
    try {
      validateDefinition({
        key: 'bad key!',
        name: 'x',
        window: 'Mon-Fri 25:00-17:00',
        steps: [
          { key: 'a', type: 'email', body: 'no subject on the first email' },
          { key: 'a', type: 'call', subject: 'calls have no subject' },
          { key: 'b', type: 'email', delay: 'later' },
        ],
      });
      expect.unreachable();
    } catch (e) {
      expect(isCadenzaError(e, 'INVALID_INPUT')).toBe(true);
      const msg = (e as Error).message;
      expect(msg).toContain('key');
    }
    try {
      validateDefinition({
        key: 'ok',
        name: 'x',
        window: 'Mon-Fri 25:00-17:00',
        steps: [
          { key: 'a', type: 'email', body: 'no subject on the first email' },
          { key: 'a', type: 'call', subject: 'calls have no subject' },
          { key: 'b', type: 'email', delay: 'later' },
        ],
      });
      expect.unreachable();
    } catch (e) {
      const problems = (e as { details: { problems: string[] } }).details.problems;
      // A first email without a subject is a subsequence's (it continues the lead's thread): valid here, refused at enrollment without a thread (thread-entry.ts).
      expect(problems.join('\n')).not.toMatch(/subject.*steps\.0|steps\.0.*subject/);
      expect(problems.join('\n')).toMatch(/duplicate step key/);
      expect(problems.join('\n')).toMatch(/only email steps have a subject/);
      expect(problems.join('\n')).toMatch(/steps.2 \(b\).delay/);
      expect(problems.join('\n')).toMatch(/needs a body/);
      expect(problems.join('\n')).toMatch(/window/);
    }
  });

  it('catches a template typo when the sequence is applied, not when the email is due', () => {
    expect(() => validateDefinition({ ...base, steps: [{ key: 'a', type: 'email', subject: 'Hi {{frist_name}}', body: 'B' }] })).toThrow(/unknown variable 'frist_name'/);
    expect(() => validateDefinition({ ...base, steps: [{ key: 'a', type: 'email', subject: 'S', body: '{Hi|Hello {{first_name}}' }] })).toThrow(/steps.0 \(a\)/);
  });

  it('refuses unknown fields rather than ignoring a typo', () => {
    expect(() => validateDefinition({ ...base, stop_rule: {} })).toThrow(/stop_rule/);
    expect(() => validateDefinition({ ...base, steps: [{ ...base.steps[0], dealy: '1 day' }] })).toThrow(/dealy/);
  });

  it('never throws anything but a CadenzaError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.anything(), (x) => {
        try {
          validateDefinition(x);
        } catch (e) {
          expect(isCadenzaError(e, 'INVALID_INPUT')).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('placing steps after an edit', () => {
  const s = (key: string, position: number) => ({ id: key, key, position, archived: false });

  it('puts live steps in file order and a removed step just after its old predecessor', () => {
    const pos = placeSteps([s('a', 0), s('b', 10), s('c', 20)], ['a', 'c']);
    expect(pos.get('a')).toBe(0);
    expect(pos.get('c')).toBe(POSITION_GAP);
    expect(pos.get('b')).toBeGreaterThan(pos.get('a')!);
    expect(pos.get('b')).toBeLessThan(pos.get('c')!);
  });

  it('keeps removed steps in their old relative order, and before everything when they were first', () => {
    const pos = placeSteps([s('a', 0), s('b', 10), s('c', 20), s('d', 30)], ['d']);
    expect(pos.get('a')!).toBeLessThan(pos.get('b')!);
    expect(pos.get('b')!).toBeLessThan(pos.get('c')!);
    expect(pos.get('c')!).toBeLessThan(pos.get('d')!);
  });

  it('gives every step a distinct position', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), { minLength: 1 }), fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h')), (old, live) => {
        const pos = placeSteps(old.map((k, i) => s(k, i * POSITION_GAP)), live);
        const all = new Set([...old, ...live]);
        const values = [...all].map((k) => pos.get(k));
        expect(values.every((v) => typeof v === 'number')).toBe(true);
        expect(new Set(values).size).toBe(values.length);
      }),
    );
  });
});

describe('call step retry rules', () => {
  const call = (retry: unknown) => ({ ...base, steps: [...base.steps, { key: 'c', type: 'call', retry }] });

  it('reads attempts, delay and outcomes, with the defaults a demanding rep expects', () => {
    expect(validateDefinition(call({ attempts: 2, after: '3 hours', on: ['busy', 'no_answer', 'busy'] })).steps[1]!.config.retry).toEqual({ attempts: 2, after: { amount: 3, unit: 'hours' }, on: ['busy', 'no_answer'] });
    expect(validateDefinition(call({ attempts: 1 })).steps[1]!.config.retry).toEqual({ attempts: 1, after: { amount: 1, unit: 'business_days' }, on: ['no_answer', 'voicemail', 'busy'] });
  });

  it('refuses a retry on a step that is not a call, an unknown outcome and a bad delay, saying where', () => {
    const bad = { ...base, steps: [...base.steps, { key: 'm', type: 'manual', retry: { attempts: 1 } }, { key: 'c', type: 'call', retry: { attempts: 1, after: 'soon' } }] };
    expect(() => validateDefinition(bad)).toThrow(/steps\.1 \(m\): only call steps have a retry rule[\s\S]*steps\.2 \(c\)\.retry\.after: invalid delay "soon"/);
    expect(() => validateDefinition(call({ attempts: 1, on: ['connected'] }))).toThrow(/steps\.1\.retry\.on\.0/);
    expect(() => validateDefinition(call({ attempts: 0 }))).toThrow(/steps\.1\.retry\.attempts/);
  });
});

describe('experiment settings in a definition', () => {
  it('keeps the settings of an email step in its config, in the model’s names', () => {
    const d = validateDefinition({ ...base, steps: [{ ...base.steps[0], experiment: { reply_window_days: 7, auto_winner: true } }] });
    expect(d.steps[0]!.config.experiment).toEqual({ replyWindowDays: 7, autoWinner: true });
  });

  it('refuses them on other steps and refuses unknown or out-of-range settings', () => {
    const bad = (steps: unknown[]) => {
      try {
        validateDefinition({ ...base, steps });
      } catch (e) {
        return isCadenzaError(e) ? e.message : String(e);
      }
      return 'accepted';
    };
    expect(bad([base.steps[0], { key: 'c', type: 'call', experiment: {} }])).toMatch(/only email steps have an experiment/);
    expect(bad([{ ...base.steps[0], experiment: { alpha: 0.5 } }])).toMatch(/alpha/);
    expect(bad([{ ...base.steps[0], experiment: { window: 3 } }])).toMatch(/experiment/);
  });
});
