import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim/sim-clock.ts';
import { startTwentyEmulator, type TwentyEmulator } from '../../sim/emulators/twenty/emulator.ts';
import { TwentyConnector } from './connector.ts';
import { TwentyViewError } from './lists.ts';

/** Lists (saved views on people) and Cadenza-owned field writes, against the emulator over HTTP. */
const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);
let clock: SimClock;
let emu: TwentyEmulator;
let key: string;

beforeEach(async () => {
  clock = new SimClock(T0);
  emu = await startTwentyEmulator({ clock, rateLimit: null });
  key = emu.tokens.issue('Cadenza');
});
afterEach(async () => {
  await emu.close();
});

const connector = () => new TwentyConnector({ baseUrl: emu.baseUrl, apiKey: () => key, clock, timeoutMs: 5_000 });

describe('TwentyConnector lists', () => {
  it("lists are the people views; a view's members are the people its filters select, 60 a page", async () => {
    const ctos = Array.from({ length: 65 }, (_, i) => emu.addPerson({ email: `cto${i}@acme.test`, jobTitle: i % 2 ? 'CTO' : 'Deputy cto' }));
    emu.addPerson({ email: 'cfo@acme.test', jobTitle: 'CFO' });
    emu.addPerson({ email: 'cto@other.test', jobTitle: 'CTO' });
    const view = emu.addView({
      name: 'Acme CTOs',
      object: 'people',
      filters: [
        { field: 'jobTitle', operand: 'CONTAINS', value: 'cto' },
        { field: 'emails', subFieldName: 'primaryEmail', operand: 'CONTAINS', value: '@acme.test' },
      ],
    });
    emu.addView({ name: 'Pipeline', object: 'opportunities', filters: [] });
    const c = connector();
    expect(await c.lists()).toEqual([{ id: view, name: 'Acme CTOs', size: null }]);

    const p1 = await c.listMembers(view, null);
    expect(p1.contacts).toHaveLength(60);
    expect(p1.next).not.toBeNull();
    const p2 = await c.listMembers(view, p1.next);
    expect(p2.next).toBeNull();
    expect([...p1.contacts, ...p2.contacts].map((x) => x.crmId)).toEqual(ctos);
  });

  it('a view with no filters lists everyone; empty and not-empty, does-not-contain and full-name filters', async () => {
    const a = emu.addPerson({ email: 'a@x.test', firstName: 'Ada', jobTitle: '' });
    const b = emu.addPerson({ email: 'b@x.test', firstName: 'Bob', lastName: 'Adams', jobTitle: 'CEO' });
    const c = emu.addPerson({ email: 'c@x.test', firstName: 'Cy', jobTitle: 'Intern' });
    const ids = async (filters: Parameters<TwentyEmulator['addView']>[0]['filters']) =>
      (await connector().listMembers(emu.addView({ name: 'v', object: 'people', filters }), null)).contacts.map((x) => x.crmId);
    expect(await ids([])).toEqual([a, b, c]);
    expect(await ids([{ field: 'jobTitle', operand: 'IS_EMPTY', value: '' }])).toEqual([a]);
    expect(await ids([{ field: 'jobTitle', operand: 'IS_NOT_EMPTY', value: '' }])).toEqual([b, c]);
    expect(await ids([{ field: 'jobTitle', operand: 'DOES_NOT_CONTAIN', value: 'intern' }])).toEqual([a, b]);
    expect(await ids([{ field: 'name', operand: 'CONTAINS', value: 'ad' }])).toEqual([a, b]);
    expect(await ids([{ field: 'createdAt', operand: 'IS_BEFORE', value: new Date(T0 + 1).toISOString() }])).toEqual([a, b, c]);
  });

  it('a view Cadenza cannot translate is refused with the reason, never listed wider', async () => {
    emu.addPerson({ email: 'a@x.test' });
    const c = connector();
    const grouped = emu.addView({ name: 'g', object: 'people', filters: [{ field: 'jobTitle', operand: 'CONTAINS', value: 'x', viewFilterGroupId: '00000000-0000-4000-8000-00000000abcd' }] });
    const relative = emu.addView({ name: 'r', object: 'people', filters: [{ field: 'createdAt', operand: 'IS_RELATIVE', value: 'PAST_7_DAY' }] });
    const comma = emu.addView({ name: 'c', object: 'people', filters: [{ field: 'jobTitle', operand: 'CONTAINS', value: 'VP, Sales' }] });
    for (const [v, why] of [
      [grouped, 'filter groups'],
      [relative, 'IS_RELATIVE'],
      [comma, 'cannot be put in a filter'],
    ] as const) {
      const err = await c.listMembers(v, null).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TwentyViewError);
      expect(err).toMatchObject({ code: 'twenty_view_unsupported', viewId: v, message: expect.stringContaining(why) });
    }
  });
});

describe('TwentyConnector writeContactFields', () => {
  it('writes the Cadenza-owned fields and the title by PATCH, clears with null, skips a person that is gone, refuses a field it does not own before writing', async () => {
    const p = emu.addPerson({ email: 'p@x.test', jobTitle: 'CTO' });
    const gone = emu.addPerson({ email: 'gone@x.test' });
    emu.trash('people', gone);
    const c = connector();
    await c.prepare();
    clock.advance(1_000);
    await c.writeContactFields([
      { crmId: gone, fields: { cadenzaSequenceStatus: 'active' } },
      { crmId: p, fields: { cadenzaSequenceStatus: 'active', cadenzaLastActivityAt: '2026-03-02T08:00:00.000Z', title: 'VP Engineering' } },
    ]);
    expect(emu.store.get('people', p)).toMatchObject({
      cadenzaSequenceStatus: 'active',
      cadenzaLastActivityAt: '2026-03-02T08:00:00.000Z',
      jobTitle: 'VP Engineering',
      updatedAt: new Date(T0 + 1_000).toISOString(),
      updatedBy: { source: 'API', name: 'cadenza' },
    });
    // Untouched: a TEXT custom field's default on records that existed before it.
    expect(emu.store.get('people', gone)!.cadenzaSequenceStatus).toBe('');

    await c.writeContactFields([{ crmId: p, fields: { cadenzaLastActivityAt: null } }]);
    expect(emu.store.get('people', p)!.cadenzaLastActivityAt).toBeNull();

    const before = emu.requests.length;
    await expect(c.writeContactFields([{ crmId: p, fields: { cadenzaSequenceStatus: 'x' } }, { crmId: p, fields: { email: 'new@x.test' } }])).rejects.toThrow(/does not write the contact field 'email'/);
    expect(emu.requests.length).toBe(before);
  });

  it('a write Twenty refuses for good (a bad timestamp) surfaces with its message', async () => {
    const p = emu.addPerson({ email: 'p@x.test' });
    const c = connector();
    await c.prepare();
    await expect(c.writeContactFields([{ crmId: p, fields: { cadenzaLastActivityAt: 'yesterday' } }])).rejects.toMatchObject({ name: 'TwentyRefusal', status: 400 });
  });
});
