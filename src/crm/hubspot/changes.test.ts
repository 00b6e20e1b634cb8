import { afterEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim/sim-clock.ts';
import { startHubSpotEmulator, type HubSpotEmulator, type HubSpotEmulatorOptions } from '../../sim/emulators/hubspot/emulator.ts';
import { CrmCursorExpiredError, type CrmChangePage, type CrmContact } from '../connector.ts';
import { HubSpotConnector } from './connector.ts';

/**
 * The HubSpot change reader against the emulator over loopback: contacts and deals in the words
 * of the CRM sync, the window moved past the search cap, one instant larger than a page, writes
 * search sees late, Cadenza's own writes told apart by the integration user, and lists. The
 * emulator's records are stamped by a SimClock, so modify dates are exact; the connector paces on
 * the system clock with a high search limit, so no test waits.
 */
let emu: HubSpotEmulator;
let clock: SimClock;
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

async function setup(o: { emulator?: HubSpotEmulatorOptions; overlapMs?: number } = {}) {
  await emu?.close();
  clock = new SimClock(T0);
  emu = await startHubSpotEmulator({ clock, searchesPerSecond: 1000, requestsPerWindow: 100_000, ...o.emulator });
  const token = emu.tokens.issue('portal');
  const crm = new HubSpotConnector({ baseUrl: emu.baseUrl, token: () => token, timeoutMs: 5000, searchesPerSecond: 1000, ...(o.overlapMs !== undefined ? { changeOverlapMs: o.overlapMs } : {}) });
  await crm.prepare();
  return crm;
}

afterEach(async () => {
  await emu?.close();
});

/** Reads until the reader says nothing more is waiting; every page's records, and the last cursor. */
async function drain(crm: HubSpotConnector, cursor: string | null, limit = 100): Promise<{ pages: CrmChangePage[]; cursor: string | null }> {
  const pages: CrmChangePage[] = [];
  for (let i = 0; i < 1000; i++) {
    const page = await crm.readChanges(cursor, limit);
    pages.push(page);
    cursor = page.cursor;
    if (!page.more) return { pages, cursor };
  }
  throw new Error('the reader never said it was done');
}

const contactsOf = (pages: CrmChangePage[]) => pages.flatMap((p) => p.contacts);
const emails = (cs: CrmContact[]) => [...new Set(cs.map((c) => c.email))].sort();

describe('HubSpot change reader', () => {
  it('reads contacts and deals from the start in Cadenza\'s words: owner addresses, stage, opt-out, the deal\'s contacts, who changed them', async () => {
    const crm = await setup();
    const owner = emu.addOwner({ email: 'Rita@Acme.test' });
    const person = emu.addOwner({ email: 'sam@acme.test' });
    clock.advance(1000);
    const ana = emu.addContact({ email: 'ana@prospect.test', firstname: 'Ana', lastname: 'Lee', company: 'Prospect', jobtitle: 'CTO', phone: '+1 555 0100', hubspot_owner_id: owner.id, lifecyclestage: 'lead' }, { by: String(person.userId) });
    clock.advance(1000);
    emu.addContact({ email: 'bo@prospect.test', hs_email_optout: 'true' });
    clock.advance(1000);
    const deal = emu.addDeal({ dealname: 'Prospect pilot', dealstage: 'appointmentscheduled', hubspot_owner_id: owner.id }, [ana], { by: String(person.userId) });

    const { pages } = await drain(crm, null);
    const contacts = contactsOf(pages);
    expect(contacts.find((c) => c.crmId === ana)).toEqual({
      crmId: ana,
      email: 'ana@prospect.test',
      firstName: 'Ana',
      lastName: 'Lee',
      company: 'Prospect',
      title: 'CTO',
      phone: '+1 555 0100',
      ownerEmail: 'rita@acme.test',
      lifecycleStage: 'lead',
      doNotContact: false,
      updatedAt: new Date(T0 + 1000).toISOString(),
      updatedBy: String(person.userId),
      cadenzaSequenceStatus: null,
      cadenzaLastActivityAt: null,
    });
    expect(contacts.find((c) => c.email === 'bo@prospect.test')).toMatchObject({ doNotContact: true, ownerEmail: null, updatedBy: null });
    expect(pages.flatMap((p) => p.deals)).toEqual([
      { crmId: deal, name: 'Prospect pilot', stage: 'appointmentscheduled', stageLabel: null, contactEmails: ['ana@prospect.test'], ownerEmail: 'rita@acme.test', createdAt: new Date(T0 + 3000).toISOString(), updatedAt: new Date(T0 + 3000).toISOString(), updatedBy: String(person.userId) },
    ]);
  });

  it('a window past the search cap is read by moving it, and a record changed mid-scan is read again, never skipped', async () => {
    // The cap is 30 here (10,000 in HubSpot); 130 changes in one window, 20 per page.
    const crm = await setup({ emulator: { searchMaxResults: 30 } });
    const ids: string[] = [];
    for (let i = 0; i < 130; i++) {
      clock.advance(10);
      ids.push(emu.addContact({ email: `p${String(i).padStart(3, '0')}@prospect.test` }));
    }
    let cursor: string | null = null;
    const seen: CrmContact[] = [];
    for (let n = 0; ; n++) {
      const page = await crm.readChanges(cursor, 20);
      seen.push(...page.contacts);
      cursor = page.cursor;
      // Mid-scan, a contact read on the first page changes: offset paging would now skip one.
      if (n === 1) {
        clock.advance(10);
        emu.updateContact(ids[0]!, { firstname: 'Changed' });
      }
      if (!page.more) break;
      expect(n).toBeLessThan(50);
    }
    expect(emails(seen)).toHaveLength(130);
    expect(seen.filter((c) => c.crmId === ids[0]).map((c) => c.firstName)).toEqual([null, 'Changed']);
    // The log proves the cap was never hit: no query paged (no `after`), no 400.
    expect(emu.log.filter((r) => r.route === 'contacts.search').every((r) => r.outcome === 200)).toBe(true);
  });

  it('more records in one instant than a page holds are all read (by id within the instant)', async () => {
    const crm = await setup();
    clock.advance(5);
    emu.addContact({ email: 'before@prospect.test' });
    clock.advance(5);
    for (let i = 0; i < 45; i++) emu.addContact({ email: `same${i}@prospect.test` });
    clock.advance(5);
    emu.addContact({ email: 'after@prospect.test' });
    const { pages } = await drain(crm, null, 20);
    expect(emails(contactsOf(pages))).toHaveLength(47);
  });

  it('search lag: a change search sees late is read by the overlap of the next scan (and lost without it)', async () => {
    for (const overlapMs of [60_000, 0]) {
      const crm = await setup({ overlapMs });
      clock.advance(1000);
      // Written first, indexed 30 s later; the next write is indexed at once.
      emu.addContact({ email: 'late@prospect.test' }, { lagMs: 30_000 });
      clock.advance(1000);
      emu.addContact({ email: 'prompt@prospect.test' }, { lagMs: 0 });
      clock.advance(1000);
      const first = await drain(crm, null);
      expect(emails(contactsOf(first.pages))).toEqual(['prompt@prospect.test']);
      clock.advance(30_000);
      const second = await drain(crm, first.cursor);
      // Without the overlap the scan restarts at the newest change read (GTE): that one again, the late one never.
      expect(emails(contactsOf(second.pages))).toEqual(overlapMs > 0 ? ['late@prospect.test', 'prompt@prospect.test'] : ['prompt@prospect.test']);
    }
  });

  it('Cadenza writes its own fields; reading the change back names the integration user', async () => {
    const crm = await setup();
    const id = emu.addContact({ email: 'ana@prospect.test' });
    const me = await crm.integrationUserId();
    expect(me).toBe(emu.userIdOf('portal'));
    const before = await drain(crm, null);
    clock.advance(1000);
    await crm.writeContactFields([{ crmId: id, fields: { cadenzaSequenceStatus: 'active', cadenzaLastActivityAt: '2026-01-05T09:00:01.000Z' } }]);
    const after = await drain(crm, before.cursor);
    const mine = contactsOf(after.pages).filter((c) => c.updatedAt === new Date(T0 + 1000).toISOString());
    expect(mine).toEqual([expect.objectContaining({ crmId: id, updatedBy: me, cadenzaSequenceStatus: 'active', cadenzaLastActivityAt: '2026-01-05T09:00:01.000Z' })]);
    await expect(crm.writeContactFields([{ crmId: id, fields: { email: 'x@y.test' } }])).rejects.toThrow(/no writable contact property/);
  });

  it('lists and their members, page by page', async () => {
    const crm = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 130; i++) ids.push(emu.addContact({ email: `m${i}@prospect.test` }));
    const list = emu.addList('Q1 targets');
    emu.addList('Newsletter', 'DYNAMIC');
    emu.addToList(list, ids);
    expect(await crm.lists()).toEqual([
      { id: list, name: 'Q1 targets', size: 130 },
      { id: expect.any(String), name: 'Newsletter', size: 0 },
    ]);
    const first = await crm.listMembers(list, null);
    expect(first.contacts).toHaveLength(100);
    expect(first.next).not.toBeNull();
    const second = await crm.listMembers(list, first.next);
    expect(second.next).toBeNull();
    expect(emails([...first.contacts, ...second.contacts])).toHaveLength(130);
  });

  it('a cursor this version cannot read is expired', async () => {
    const crm = await setup();
    await expect(crm.readChanges('{"v":0}', 10)).rejects.toBeInstanceOf(CrmCursorExpiredError);
    await expect(crm.readChanges('not json', 10)).rejects.toBeInstanceOf(CrmCursorExpiredError);
  });
});
