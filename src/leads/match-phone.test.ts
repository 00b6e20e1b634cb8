import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { newId } from '../common/ids.ts';
import { seededRandom } from '../common/random.ts';
import { MAX_PHONE_MATCHES, matchLeadByPhone } from './match-phone.ts';
import { insertLead, updateLead } from './sql/leads.ts';

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

describe.each(testBackends())('matchLeadByPhone on %s', (backend) => {
  let store: TestStore;
  const random = seededRandom('match-phone');
  let n = 0;
  const id = () => newId(T0 + n++, random);

  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(() => store?.destroy());

  async function workspace(country: string | null = null): Promise<string> {
    const ws = id();
    await store.db.insertInto('workspace').values({ id: ws, name: `w${n}`, country }).execute();
    return ws;
  }
  /** A lead written as the API writes one, so its number is read by the production path. */
  async function lead(ws: string, email: string, phone: string, country: string | null = null): Promise<string> {
    const leadId = id();
    await insertLead(store.db, { id: leadId, workspaceId: ws, cols: { email, email_norm: email, phone, country }, custom: undefined });
    return leadId;
  }

  it("finds the workspace's lead by the caller's number however the number was written on either side", async () => {
    const ws = await workspace('GB');
    const ann = await lead(ws, 'ann@example.com', '020 7946 0958');
    await lead(ws, 'bob@example.com', '+33 1 23 45 67 89');
    for (const caller of ['+442079460958', '+44 20 7946 0958', '020 7946 0958', '0044 20 7946 0958', 'tel:+44-20-7946-0958', '\u202a+44 20 7946 0958\u202c']) {
      const m = await matchLeadByPhone(store.db, ws, caller, caller.startsWith('0044') ? null : 'GB');
      expect({ caller, ids: m.leads.map((l) => l.id) }).toEqual({ caller, ids: [ann] });
      expect(m.caller.e164).toBe('+442079460958');
    }
  });

  it("never finds another workspace's lead", async () => {
    const mine = await workspace();
    const theirs = await workspace();
    await lead(theirs, 'x@example.com', '+1 213 373 4253');
    expect((await matchLeadByPhone(store.db, mine, '+12133734253', null)).leads).toEqual([]);
    expect((await matchLeadByPhone(store.db, theirs, '+12133734253', null)).leads).toHaveLength(1);
  });

  it('answers every lead sharing a number, most recently updated first, and says when there are more than it reads', async () => {
    const ws = await workspace('US');
    const a = await lead(ws, 'a@switchboard.test', '(213) 373-4253');
    const b = await lead(ws, 'b@switchboard.test', '213-373-4253 ext. 12');
    const c = await lead(ws, 'c@switchboard.test', '+1 213 373 4253');
    await updateLead(store.db, { workspaceId: ws, leadId: a, cols: { title: 'CEO' }, custom: undefined, now: new Date(T0 + 3_600_000) });
    await updateLead(store.db, { workspaceId: ws, leadId: b, cols: { title: 'EA' }, custom: undefined, now: new Date(T0 + 7_200_000) });
    await store.db.updateTable('lead').set({ updated_at: new Date(T0) }).where('id', '=', c).execute();
    const m = await matchLeadByPhone(store.db, ws, '+12133734253', null);
    expect(m.leads.map((l) => l.id)).toEqual([b, a, c]);
    expect(m.more).toBe(false);

    for (let i = 0; i < MAX_PHONE_MATCHES; i++) await lead(ws, `desk${i}@switchboard.test`, '+1 213 373 4253');
    const many = await matchLeadByPhone(store.db, ws, '+12133734253', null);
    expect(many.leads).toHaveLength(MAX_PHONE_MATCHES);
    expect(many.more).toBe(true);
  });

  it('matches a number the metadata calls not valid by its E.164 form, and a caller with none matches nobody, saying why', async () => {
    const ws = await workspace('BE');
    const odd = await lead(ws, 'odd@example.com', '0911 23 12 31');
    expect((await matchLeadByPhone(store.db, ws, '+32 911 23 12 31', null)).leads.map((l) => l.id)).toEqual([odd]);
    for (const caller of ['anonymous', '', '123', '+0123']) {
      const m = await matchLeadByPhone(store.db, ws, caller, 'BE');
      expect(m).toMatchObject({ leads: [], more: false, caller: { e164: null, status: 'flagged' } });
      expect(m.caller.reason).toBeTruthy();
    }
  });

  it('is one probe of the (workspace_id, phone_e164) index', async () => {
    const ws = await workspace();
    // A few rows make a sequential scan cheaper; forbidding it (in this transaction only) shows the index serves the query.
    const plan = await store.db.transaction().execute(async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      return sql<Record<string, string>>`explain select id from lead where workspace_id = ${ws}::uuid and phone_e164 = '+12133734253' order by updated_at desc, id desc limit 21`.execute(tx);
    });
    expect(plan.rows.map((r) => Object.values(r)[0]).join('\n')).toContain('lead_phone_e164');
  });
});
