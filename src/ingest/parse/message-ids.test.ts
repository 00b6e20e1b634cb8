import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMessageIds } from './message-ids.ts';

/** Property tests of the Message-ID list parser (fixed seeds: a failure prints the seed to replay). */
const SEED = 4242;

const atom = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+\/=?^_`{|}~-]{1,12}$/);
const dotAtom = fc.array(atom, { minLength: 1, maxLength: 3 }).map((xs) => xs.join('.'));
const msgId = fc.tuple(dotAtom, dotAtom).map(([l, r]) => `${l}@${r}`);
/** White space a header may carry between ids: spaces, tabs, folding. */
const gap = fc.constantFrom(' ', '  ', '\t', '\r\n ', '\r\n\t', '\n ', ' (a comment) ', ' (nested (comment)) ', ', ');

describe('parseMessageIds', () => {
  it('round-trips any list of ids, however it is folded and commented', () => {
    fc.assert(
      fc.property(fc.uniqueArray(msgId, { minLength: 1, maxLength: 8 }), fc.array(gap, { minLength: 9, maxLength: 9 }), (ids, gaps) => {
        const header = gaps[0] + ids.map((id, i) => `<${id}>${gaps[i + 1]}`).join('');
        expect(parseMessageIds(header)).toEqual(ids.map((id) => `<${id}>`));
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('adds the brackets to bare ids', () => {
    fc.assert(
      fc.property(fc.uniqueArray(msgId, { minLength: 1, maxLength: 5 }), (ids) => {
        expect(parseMessageIds(ids.join(' '))).toEqual(ids.map((id) => `<${id}>`));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('garbage never yields an id with white space or a bracket inside', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (garbage) => {
        for (const id of parseMessageIds(garbage)) {
          expect(id).toMatch(/^<[^<>\s()]+>$/);
          expect(id.length).toBeLessThanOrEqual(1000);
        }
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it('garbage mixed into real ids keeps the real ids in order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(msgId, { minLength: 1, maxLength: 5 }), fc.stringMatching(/^[^<>()\\]{0,30}$/), (ids, junk) => {
        const header = ids.map((id) => `${junk.replace(/@/g, '')} <${id}>`).join(' ');
        expect(parseMessageIds(header)).toEqual(ids.map((id) => `<${id}>`));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('is linear on hostile input', () => {
    const t0 = performance.now();
    parseMessageIds(`<${' '.repeat(200_000)}`);
    parseMessageIds('('.repeat(200_000));
    parseMessageIds('<a@b '.repeat(50_000));
    expect(performance.now() - t0).toBeLessThan(2_000);
  });
});
