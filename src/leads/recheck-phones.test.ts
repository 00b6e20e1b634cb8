import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { makeWorld } from '../../test/fixtures/world.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { matchLeadByPhone } from './match-phone.ts';
import { recheckPhones } from './recheck-phones.ts';

describe('reading stored numbers again', () => {
  let store: TestStore;
  let workspaceId: string;
  let leadIds: string[];

  beforeAll(async () => {
    store = await freshStore('pglite');
    const world = await makeWorld(store, { leads: 5, mailboxes: 0, nowMs: Date.UTC(2026, 11, 3), random: seededRandom(48), zones: ['UTC'], countries: [null] });
    workspaceId = world.workspaceId;
    leadIds = [...world.leadIds].sort();
    // As leads written before migration 0048 are: a number, nothing read from it.
    const numbers = ['020 7946 0018', '+1 415 555 2671', 'call me', null, '0612345678'];
    for (const [i, id] of leadIds.entries()) {
      await store.db.updateTable('lead').set({ phone: numbers[i] ?? null, country: i === 0 ? 'GB' : null, phone_e164: null, phone_status: null, phone_reason: null }).where('id', '=', id).execute();
    }
  });
  afterAll(() => store?.destroy());

  const row = (id: string) => store.db.selectFrom('lead').select(['phone_e164', 'phone_status', 'phone_reason', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();

  it('fills the leads never read, in pages; flags what it cannot read with the reason; leaves leads without a number alone', async () => {
    const before = await row(leadIds[0]!);
    const progress: Array<[number, number]> = [];
    const r = await recheckPhones(store.db, { workspaceId, batch: 2, onProgress: (d, t) => progress.push([d, t]) });
    expect(r).toEqual({ read: 4, changed: 4, valid: 2, flagged: 2, flaggedByReason: { not_a_number: 1, no_country: 1 } });
    expect(progress.at(-1)).toEqual([4, 4]);
    expect(await row(leadIds[0]!)).toMatchObject({ phone_e164: '+442079460018', phone_status: 'valid', phone_reason: null, updated_at: before.updated_at });
    expect(await row(leadIds[1]!)).toMatchObject({ phone_e164: '+14155552671', phone_status: 'valid' });
    expect(await row(leadIds[2]!)).toMatchObject({ phone_e164: null, phone_status: 'flagged', phone_reason: expect.any(String) });
    expect(await row(leadIds[3]!)).toMatchObject({ phone_e164: null, phone_status: null });
    expect(await row(leadIds[4]!)).toMatchObject({ phone_status: 'flagged', phone_reason: expect.stringMatching(/country/) });
    // The incoming call from the old lead's number now finds it.
    expect((await matchLeadByPhone(store.db, workspaceId, '+44 20 7946 0018', null)).leads.map((l) => l.id)).toEqual([leadIds[0]]);
    // Run again: nothing is left unread.
    expect(await recheckPhones(store.db, { workspaceId })).toMatchObject({ read: 0, changed: 0 });
  });

  it("with --all, reads every number again: a national number once the workspace has a country", async () => {
    await store.db.updateTable('workspace').set({ country: 'FR' }).where('id', '=', workspaceId).execute();
    const r = await recheckPhones(store.db, { workspaceId, all: true });
    expect(r).toMatchObject({ read: 4, changed: 1, valid: 3, flagged: 1 });
    expect(await row(leadIds[4]!)).toMatchObject({ phone_e164: '+33612345678', phone_status: 'valid', phone_reason: null });
  });
});
