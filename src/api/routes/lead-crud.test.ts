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

  it('deletes a lead with its enrollments', async () => {
    const url = `/api/workspaces/${ws}/leads/${g.leadId}`;
    expect((await owner.call('DELETE', url)).statusCode).toBe(200);
    expect((await owner.call('DELETE', url)).statusCode).toBe(404);
    expect(await h.store.db.selectFrom('enrollment').select('id').where('id', '=', g.enrollmentId!).executeTakeFirst()).toBeUndefined();
  });
});
