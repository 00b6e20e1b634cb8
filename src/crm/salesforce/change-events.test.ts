import { describe, expect, it } from 'vitest';
import { parseEvent, planEvents, type CdcEvent } from './change-events.ts';

/** Which events of a delivered batch a read takes (pure): order, duplicates, limits, skips, gaps. */
const ME = '005ME';
const ADMIN = '005ADMIN';

function ev(replayId: number, entity: string, recordIds: string[], over: { type?: string; at?: number; by?: string } = {}): CdcEvent {
  return { replayId, header: { entity, type: over.type ?? 'UPDATE', recordIds, commitTimestamp: over.at ?? 1000 + replayId, commitUser: over.by ?? ADMIN } };
}

const opts = { after: null, skipBefore: null, ownUser: ME, limit: 100 };
const named = (plan: ReturnType<typeof planEvents>) => Object.fromEntries(Object.entries(plan.ids).map(([k, v]) => [k, [...v.keys()]]));

describe('planEvents', () => {
  it('takes events in replay order, each once; a duplicate or an event at or before the cursor is dropped', () => {
    const plan = planEvents([ev(3, 'Lead', ['00Q1']), ev(2, 'Contact', ['0031']), ev(2, 'Contact', ['0031']), ev(1, 'Contact', ['0030'])], { ...opts, after: 1 });
    expect(named(plan)).toEqual({ contacts: ['0031'], leads: ['00Q1'], deals: [], roles: [] });
    expect(plan).toMatchObject({ last: 3, left: false, gap: null });
    expect(plan.ids.leads.get('00Q1')).toEqual({ type: 'UPDATE', at: 1003, by: ADMIN });
  });

  it('stops once `limit` records are named (a transaction may name several); the rest is left', () => {
    const plan = planEvents([ev(1, 'Contact', ['a', 'b', 'c']), ev(2, 'Contact', ['d']), ev(3, 'Contact', ['e'])], { ...opts, limit: 3 });
    expect(plan).toMatchObject({ last: 1, left: true });
    expect(named(plan).contacts).toEqual(['a', 'b', 'c']);
  });

  it("takes without records: other entities, events the poll gave (before skipBefore), the connection's own changes (but not its gaps)", () => {
    const plan = planEvents(
      [ev(1, 'Account', ['001']), ev(2, 'Contact', ['old'], { at: 10 }), ev(3, 'Contact', ['mine'], { by: ME }), ev(4, 'Contact', ['gap'], { by: ME, type: 'GAP_UPDATE' }), ev(5, 'OpportunityContactRole', ['00K'])],
      { ...opts, skipBefore: 100 },
    );
    expect(named(plan)).toEqual({ contacts: ['gap'], leads: [], deals: [], roles: ['00K'] });
    expect(plan.last).toBe(5);
  });

  it('a gap without records is taken alone: after the events before it, or by itself when first', () => {
    const events = [ev(1, 'Contact', ['a']), ev(2, 'Contact', [], { type: 'GAP_OVERFLOW', at: 5000 }), ev(3, 'Contact', ['b'])];
    expect(planEvents(events, opts)).toMatchObject({ last: 1, left: true, gap: null });
    const alone = planEvents(events, { ...opts, after: 1 });
    expect(alone).toMatchObject({ last: 2, left: true, gap: { at: 5000 } });
    expect(named(alone).contacts).toEqual([]);
  });

  it('parses a delivered message; without a replay id it is nothing, with an unreadable header a gap of unknown time', () => {
    const header = { entityName: 'Contact', changeType: 'CREATE', recordIds: ['003'], commitTimestamp: 7, commitUser: ADMIN };
    expect(parseEvent({ event: { replayId: 9 }, payload: { ChangeEventHeader: header } })).toEqual({ replayId: 9, header: { entity: 'Contact', type: 'CREATE', recordIds: ['003'], commitTimestamp: 7, commitUser: ADMIN } });
    expect(parseEvent({ payload: { ChangeEventHeader: header } })).toBeNull();
    const broken = parseEvent({ event: { replayId: 10 }, payload: {} });
    expect(broken).toEqual({ replayId: 10, header: null });
    expect(planEvents([broken!], opts)).toMatchObject({ last: 10, gap: { at: null } });
  });
});
