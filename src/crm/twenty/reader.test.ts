import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim/sim-clock.ts';
import { startTwentyEmulator, type TwentyEmulator, type TwentyEmulatorOptions } from '../../sim/emulators/twenty/emulator.ts';
import { twentyErrors } from '../../sim/emulators/twenty/errors.ts';
import { CrmCursorExpiredError, CrmTransientError, type CrmChangePage, type CrmContact } from '../connector.ts';
import { TwentyConnector } from './connector.ts';

/** Changes in from Twenty, against the emulator over HTTP: what readChanges reports, and that none is lost. */
const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
let clock: SimClock;
let emu: TwentyEmulator;
let key: string;

async function start(opts: TwentyEmulatorOptions = {}) {
  emu = await startTwentyEmulator({ clock, rateLimit: null, ...opts });
  key = emu.tokens.issue('Cadenza');
}

beforeEach(async () => {
  clock = new SimClock(T0);
  await start();
});
afterEach(async () => {
  await emu.close();
});

const connector = (over: Partial<ConstructorParameters<typeof TwentyConnector>[0]> = {}) =>
  new TwentyConnector({ baseUrl: emu.baseUrl, apiKey: () => key, clock, timeoutMs: 5_000, ...over });

/** Every page from `cursor` until `more` is false. */
async function drain(c: TwentyConnector, cursor: string | null, limit: number) {
  const pages: CrmChangePage[] = [];
  for (let i = 0; i < 500; i++) {
    const p = await c.readChanges(cursor, limit);
    pages.push(p);
    cursor = p.cursor;
    if (!p.more) return { cursor, contacts: pages.flatMap((x) => x.contacts), deals: pages.flatMap((x) => x.deals), pages: pages.length };
  }
  throw new Error('readChanges never caught up');
}

const versions = (cs: CrmContact[]) => cs.map((c) => `${c.crmId}@${c.updatedAt}`);

describe('TwentyConnector readChanges', () => {
  it('many people with one updatedAt across page boundaries: every one read, none twice within a sweep, and later edits after them', async () => {
    const same = Array.from({ length: 73 }, (_, i) => emu.addPerson({ email: `p${i}@x.test` }));
    clock.advance(1);
    const next = Array.from({ length: 9 }, (_, i) => emu.addPerson({ email: `q${i}@x.test` }));
    const c = connector();
    const first = await drain(c, null, 20);
    expect(new Set(first.contacts.map((x) => x.crmId))).toEqual(new Set([...same, ...next]));
    // A page cut inside a millisecond re-reads that millisecond by id; what was reported is not reported again.
    expect(new Set(versions(first.contacts)).size).toBe(first.contacts.length);
    expect(first.pages).toBeGreaterThan(4);

    clock.advance(10_000);
    // Edited in reverse id order within one millisecond.
    for (const id of [...same.slice(0, 12)].reverse()) emu.edit('people', id, { city: 'Paris' });
    const second = await drain(c, first.cursor, 8);
    expect(second.contacts.map((x) => x.crmId).sort()).toEqual([...same.slice(0, 12)].sort());
    expect(second.contacts.every((x) => x.updatedAt === iso(T0 + 10_001))).toBe(true);
  });

  it('microseconds in one millisecond, in the opposite order to the ids (PostgreSQL keeps microseconds): a page cut inside it loses none', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => emu.addPerson({ email: `u${i}@x.test` }));
    // Hostile fixture: the later the id, the earlier the microsecond, so that time order and id order disagree.
    ids.forEach((id, i) => (emu.store.get('people', id)!.updatedAt = `2026-03-02T09:00:00.000${String(900 - i * 10).padStart(3, '0')}Z`));
    const c = connector();
    const r = await drain(c, null, 16);
    expect(new Set(r.contacts.map((x) => x.crmId))).toEqual(new Set(ids));
    expect(r.contacts).toHaveLength(10);
  });

  it('overlap: a change committed late with an earlier updatedAt is read; what was reported is not reported again', async () => {
    const a = emu.addPerson({ email: 'a@x.test' });
    const b = emu.addPerson({ email: 'b@x.test' });
    clock.advance(30_000);
    emu.edit('people', a, { city: 'Oslo' });
    const c = connector({ changeOverlapMs: 60_000 });
    const first = await drain(c, null, 40);
    expect(versions(first.contacts)).toEqual([`${b}@${iso(T0)}`, `${a}@${iso(T0 + 30_000)}`]);

    // Nothing new: the overlap is read again, and nothing comes back.
    const before = emu.requests.length;
    const idle = await c.readChanges(first.cursor, 40);
    expect(idle.contacts).toEqual([]);
    expect(emu.requests.length - before).toBeGreaterThanOrEqual(4);

    // A transaction stamped 10 s before the newest change read commits only now.
    const late = emu.addPerson({ email: 'late@x.test' });
    emu.store.get('people', late)!.updatedAt = iso(T0 + 20_000);
    const after = await c.readChanges(idle.cursor, 40);
    expect(versions(after.contacts)).toEqual([`${late}@${iso(T0 + 20_000)}`]);
    expect((await c.readChanges(after.cursor, 40)).contacts).toEqual([]);
  });

  it('contacts and deals in Cadenza words: company, owner by the company account owner, phone, title; stage, point of contact, owner', async () => {
    const ann = emu.addMember({ email: 'Ann@Seller.test', firstName: 'Ann' });
    const acme = emu.addCompany({ name: 'Acme', accountOwnerId: ann });
    const jane = emu.addPerson({ email: 'Jane@Acme.test', firstName: 'Jane', lastName: 'Doe', jobTitle: 'CTO', phone: '5550100', companyId: acme });
    const deal = emu.addOpportunity({ name: 'Acme pilot', stage: 'PROPOSAL', pointOfContactId: jane, companyId: acme, ownerId: ann, by: ann });
    const r = await drain(connector(), null, 100);
    expect(r.contacts).toEqual([
      {
        crmId: jane,
        email: 'jane@acme.test',
        firstName: 'Jane',
        lastName: 'Doe',
        company: 'Acme',
        title: 'CTO',
        phone: '5550100',
        ownerEmail: 'ann@seller.test',
        lifecycleStage: null,
        doNotContact: false,
        updatedAt: iso(T0),
        updatedBy: 'manual:',
        deleted: false,
      },
    ]);
    expect(r.deals).toEqual([
      { crmId: deal, name: 'Acme pilot', stage: 'PROPOSAL', stageLabel: 'Proposal', contactEmails: ['jane@acme.test'], ownerEmail: 'ann@seller.test', createdAt: iso(T0), updatedAt: iso(T0), updatedBy: `member:${ann}`, deleted: false },
    ]);
  });

  it('soft deletes of people and opportunities are reported deleted, as a version newer than the last one read', async () => {
    const p = emu.addPerson({ email: 'p@x.test' });
    const keep = emu.addPerson({ email: 'keep@x.test' });
    const o = emu.addOpportunity({ name: 'Deal', stage: 'NEW', pointOfContactId: keep });
    const c = connector();
    const first = await drain(c, null, 40);
    expect(first.contacts.every((x) => !x.deleted)).toBe(true);

    clock.advance(5_000);
    emu.trash('people', p);
    emu.trash('opportunities', o);
    const r = await drain(c, first.cursor, 40);
    expect(r.contacts).toEqual([expect.objectContaining({ crmId: p, deleted: true, updatedAt: iso(T0 + 5_000) })]);
    expect(r.deals).toEqual([expect.objectContaining({ crmId: o, deleted: true, updatedAt: iso(T0 + 5_000), contactEmails: ['keep@x.test'] })]);
    // Many deletes in one millisecond page like changes do.
    clock.advance(5_000);
    const many = Array.from({ length: 30 }, (_, i) => emu.addPerson({ email: `m${i}@x.test` }));
    const seen = await drain(c, r.cursor, 40);
    clock.advance(5_000);
    for (const id of many) emu.trash('people', id);
    const gone = await drain(c, seen.cursor, 12);
    expect(new Set(gone.contacts.filter((x) => x.deleted).map((x) => x.crmId))).toEqual(new Set(many));
  });

  it("own changes: a field write is stamped with the API key's actor, which integrationUserId names; a member's edit is theirs", async () => {
    const ann = emu.addMember({ email: 'ann@seller.test' });
    const p = emu.addPerson({ email: 'p@x.test' });
    const q = emu.addPerson({ email: 'q@x.test' });
    const c = connector();
    await c.prepare();
    expect(await c.integrationUserId()).toBeNull();
    const first = await drain(c, null, 40);

    clock.advance(1_000);
    await c.writeContactFields([{ crmId: p, fields: { cadenzaSequenceStatus: 'active' } }]);
    expect(await c.integrationUserId()).toBe('api:cadenza');
    emu.edit('people', q, { city: 'Rome' }, ann);
    const r = await drain(c, first.cursor, 40);
    const by = Object.fromEntries(r.contacts.map((x) => [x.crmId, x.updatedBy]));
    expect(by).toEqual({ [p]: 'api:cadenza', [q]: `member:${ann}` });

    // Named in the options, the key is known before any write; another key's changes are not ours.
    expect(await connector({ apiKeyName: 'Cadenza' }).integrationUserId()).toBe('api:cadenza');
    const other = emu.tokens.issue('Zapier');
    clock.advance(1_000);
    await connector({ apiKey: () => other }).writeContactFields([{ crmId: q, fields: { title: 'VP' } }]);
    const z = await drain(c, r.cursor, 40);
    expect(z.contacts.map((x) => [x.crmId, x.title, x.updatedBy])).toEqual([[q, 'VP', 'api:zapier']]);
  });

  it('a cursor it cannot read is expired (the sync resyncs); 429 and an outage are transient', async () => {
    const c = connector();
    await expect(c.readChanges('not-a-cursor', 10)).rejects.toBeInstanceOf(CrmCursorExpiredError);
    await expect(c.readChanges(Buffer.from('{"v":9}').toString('base64url'), 10)).rejects.toBeInstanceOf(CrmCursorExpiredError);

    emu.faults.inject('people.list', { kind: 'respond', ...twentyErrors.tooManyRequests(100, 60_000) });
    const err = await c.readChanges(null, 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmTransientError);
    expect((err as CrmTransientError).retryAfterMs).toBeGreaterThan(0);

    emu.outage(T0 + 60_000);
    await expect(c.readChanges(null, 10)).rejects.toMatchObject({ name: 'CrmTransientError', message: expect.stringContaining('503') });
    await expect(c.lists()).rejects.toBeInstanceOf(CrmTransientError);
    await expect(c.writeContactFields([{ crmId: '00000000-0000-4000-8000-000000000001', fields: { cadenzaSequenceStatus: 'x' } }])).rejects.toBeInstanceOf(CrmTransientError);
  });

  it('a workspace under the real rate limit: a full read within it answers 429 as CrmTransientError, and the cursor of the last page still resumes', async () => {
    await emu.close();
    await start({ rateLimit: { requests: 12, windowMs: 60_000 } });
    for (let i = 0; i < 30; i++) emu.addPerson({ email: `p${i}@x.test` });
    // The connector told the workspace's limit: a 429's wait (no Retry-After from Twenty) refills 9 requests.
    const c = connector({ rateLimit: { requests: 12, windowMs: 60_000 } });
    let cursor: string | null = null;
    const ids = new Set<string>();
    let throttled = 0;
    for (let i = 0; i < 100; i++) {
      try {
        const p: CrmChangePage = await c.readChanges(cursor, 8);
        p.contacts.forEach((x) => ids.add(x.crmId));
        cursor = p.cursor;
        if (!p.more) break;
      } catch (e) {
        expect(e).toBeInstanceOf(CrmTransientError);
        throttled++;
        clock.advance((e as CrmTransientError).retryAfterMs!);
      }
    }
    expect(throttled).toBeGreaterThan(0);
    expect(ids.size).toBe(30);
  });
});
