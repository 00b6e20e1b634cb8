import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('leads routes (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Leads Co', 'owner@leads.test');
    b = await login(h.app, 'owner@leads.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
  });
  afterAll(() => h?.close());

  it('imports a CSV with a mapping, reports each rejected row, and finds leads by name or company', async () => {
    const csv = 'Work Email;Given;Org;Colour\nana@acme.test;Ana;Acme;blue\nnot-an-address;Bob;Nope;red\nana@acme.test;Ana;Acme;green\nzoe@zeta.test;Zoé;Zeta;\n';
    const r = await b.call('POST', `${base}/leads/import`, { csv, mapping: { 'Work Email': 'email', Given: 'first_name', Org: 'company', Colour: 'custom.colour' } });
    expect(r.statusCode, r.body).toBe(200);
    const rep = r.json();
    expect(rep).toMatchObject({ rowsRead: 4, imported: 2, rejected: 2 });
    expect(rep.issues.map((i: { line: number; kind: string }) => [i.line, i.kind])).toEqual([
      [3, 'rejected'],
      [4, 'rejected'],
    ]);
    expect(rep.columns).toContainEqual({ header: 'Colour', target: 'custom.colour' });

    const all = (await b.call('GET', `${base}/leads`)).json();
    expect(all.total).toBe(2);
    expect(all.leads.find((l: { email: string }) => l.email === 'ana@acme.test')).toMatchObject({ firstName: 'Ana', company: 'Acme', custom: { colour: 'blue' } });
    const byCompany = (await b.call('GET', `${base}/leads?search=zet`)).json();
    expect(byCompany.leads.map((l: { email: string }) => l.email)).toEqual(['zoe@zeta.test']);
    const ana = all.leads.find((l: { email: string }) => l.email === 'ana@acme.test');
    const page = (await b.call('GET', `${base}/leads/${ana.id}`)).json();
    // The list's row is the lead with its tags; the lead's page has them beside it, with its lists.
    const { tags, ...lead } = ana;
    expect(page).toEqual({ lead, tags, lists: [], enrollments: [], timeline: [] });
    expect((await b.call('GET', `${base}/leads/0190aaaa-0000-7000-8000-000000000000`)).statusCode).toBe(404);
    // LIKE wildcards in the search are literal.
    expect((await b.call('GET', `${base}/leads?search=%25`)).json().total).toBe(0);
  });

  it('refuses an empty CSV with a 400 that names the field', async () => {
    const r = await b.call('POST', `${base}/leads/import`, { csv: '' });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.message).toMatch(/^body\.csv/);
  });
});
