import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../common/errors.ts';
import { changeRetention, cutoffs, KEEP_EVERYTHING, retentionOf } from './retention.ts';

describe('retention settings', () => {
  it('keeps everything by default and ignores hand-edited values out of range', () => {
    expect(retentionOf({})).toEqual(KEEP_EVERYTHING);
    expect(retentionOf({ retention: { messagesDays: 5, eventsDays: 90, importRejectsDays: 1.5 } })).toEqual({ ...KEEP_EVERYTHING, eventsDays: 90 });
  });

  it('checks each kind against its floor and the ceiling, and names every bad field', () => {
    expect(changeRetention(KEEP_EVERYTHING, { messageBodiesDays: 30, messagesDays: 90 })).toMatchObject({ messageBodiesDays: 30, messagesDays: 90 });
    try {
      changeRetention(KEEP_EVERYTHING, { messageBodiesDays: 3, eventsDays: 99_999, bogus: 1 } as never);
      expect.unreachable();
    } catch (e) {
      expect(isCadenzaError(e, 'INVALID_INPUT')).toBe(true);
      expect(Object.keys((e as { details: { fields: object } }).details.fields).sort()).toEqual(['bogus', 'eventsDays', 'messageBodiesDays']);
    }
  });

  it('refuses bodies kept longer than their messages; null puts a kind back to keep', () => {
    expect(() => changeRetention(KEEP_EVERYTHING, { messageBodiesDays: 90, messagesDays: 60 })).toThrow(/messagesDays \(60\)/);
    const r = changeRetention({ ...KEEP_EVERYTHING, eventsDays: 30 }, { eventsDays: null });
    expect(r.eventsDays).toBeNull();
  });

  it('turns days into cutoff instants', () => {
    const c = cutoffs({ ...KEEP_EVERYTHING, eventsDays: 2 }, 10 * 86_400_000);
    expect(c.eventsDays?.getTime()).toBe(8 * 86_400_000);
    expect(c.messagesDays).toBeNull();
  });
});
