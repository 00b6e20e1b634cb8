import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerFixture, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('lead create, update, delete (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let g: ObjectIds;

  beforeAll(async () => {
    ({ h, ws, owner, g } = await ownerFixture(backend));
  }, 60_000);
  afterAll(async () => h?.close());

  it('creates a lead normalised as an import would, and refuses a duplicate or an unreadable field', async () => {
    const r = await owner.call('POST', `/api/workspaces/${ws}/leads`, { email: ' Ada@Example.COM ', firstName: 'Ada', country: 'France', timeZone: 'Europe/Paris', custom: { source: 'event' } });
    expect(r.statusCode).toBe(201);
    expect(r.json()).toMatchObject({ email: 'Ada@example.com', firstName: 'Ada', country: 'FR', timeZone: 'Europe/Paris', custom: { source: 'event' } });
    const dup = await owner.call('POST', `/api/workspaces/${ws}/leads`, { email: 'ada@example.com' });
    expect(dup.statusCode).toBe(409);
    const country = await owner.call('POST', `/api/workspaces/${ws}/leads`, { email: 'x@example.com', country: 'Atlantis' });
    expect(country.statusCode).toBe(400);
    expect(country.json().error.details.field).toBe('country');
    const custom = await owner.call('POST', `/api/workspaces/${ws}/leads`, { email: 'y@example.com', custom: { 'bad name': 'x' } });
    expect(custom.statusCode).toBe(400);
  });

  it('updates fields and merges custom fields (null removes one)', async () => {
    const url = `/api/workspaces/${ws}/leads/${g.leadId}`;
    await owner.call('PATCH', url, { custom: { stage: 'warm', source: 'list' } });
    const r = await owner.call('PATCH', url, { title: 'CTO', phone: null, custom: { source: null, owner: 'me' } });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ title: 'CTO', phone: null, custom: { stage: 'warm', owner: 'me' } });
    expect(r.json().custom.source).toBeUndefined();
    expect((await owner.call('PATCH', url, { email: 'not an address' })).statusCode).toBe(400);
  });

  it("answers the number's E.164 form and verdict, read again when the number or the country changes", async () => {
    await h.store.db.updateTable('workspace').set({ country: 'US' }).where('id', '=', ws).execute();
    // No country of its own: read in the workspace's.
    const us = await owner.call('POST', `/api/workspaces/${ws}/leads`, { email: 'us.phone@example.com', phone: '(213) 373-4253 ext. 7' });
    expect(us.statusCode).toBe(201);
    expect(us.json()).toMatchObject({ phone: '(213) 373-4253 ext. 7', phoneE164: '+12133734253', phoneStatus: 'valid', phoneReason: null });
    const fr = await owner.call('POST', `/api/workspaces/${ws}/leads`, { email: 'fr.phone@example.com', phone: '01 23 45 67 89', country: 'FR' });
    expect(fr.json()).toMatchObject({ phoneE164: '+33123456789', phoneStatus: 'valid' });
    const url = `/api/workspaces/${ws}/leads/${fr.json().id}`;
    // A new number alone is read in the stored country (FR), not the workspace's.
    expect((await owner.call('PATCH', url, { phone: '06 12 34 56 78' })).json()).toMatchObject({ phoneE164: '+33612345678', phoneStatus: 'valid' });
    // A new country alone reads the stored number again: a French mobile's digits are too many for a Spanish number.
    expect((await owner.call('PATCH', url, { country: 'ES' })).json()).toMatchObject({ phone: '06 12 34 56 78', phoneE164: null, phoneStatus: 'flagged', phoneReason: 'too long for ES' });
    // A change that touches neither leaves the verdict alone; clearing the number clears all three.
    expect((await owner.call('PATCH', url, { title: 'CFO' })).json()).toMatchObject({ phoneStatus: 'flagged' });
    expect((await owner.call('PATCH', url, { phone: null })).json()).toMatchObject({ phone: null, phoneE164: null, phoneStatus: null, phoneReason: null });
    // A flagged number is stored, never refused.
    const bad = await owner.call('POST', `/api/workspaces/${ws}/leads`, { email: 'bad.phone@example.com', phone: '123', country: 'GB' });
    expect(bad.statusCode).toBe(201);
    expect(bad.json()).toMatchObject({ phone: '123', phoneE164: null, phoneStatus: 'flagged', phoneReason: 'too short for GB' });
    const list = await owner.call('GET', `/api/workspaces/${ws}/leads?search=phone@example.com`);
    const status = Object.fromEntries(list.json().leads.map((l: { email: string; phoneStatus: string | null }) => [l.email, l.phoneStatus]));
    expect(status).toEqual({ 'us.phone@example.com': 'valid', 'fr.phone@example.com': null, 'bad.phone@example.com': 'flagged' });
  });

  it('deletes a lead with its enrollments', async () => {
    const url = `/api/workspaces/${ws}/leads/${g.leadId}`;
    expect((await owner.call('DELETE', url)).statusCode).toBe(200);
    expect((await owner.call('DELETE', url)).statusCode).toBe(404);
    expect(await h.store.db.selectFrom('enrollment').select('id').where('id', '=', g.enrollmentId!).executeTakeFirst()).toBeUndefined();
  });
});
