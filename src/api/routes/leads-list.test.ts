import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedGraph, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

interface ListAnswer {
  leads: Array<{ id: string; email: string }>;
  nextCursor: string | null;
  total: number | null;
  totalExact: boolean;
}

describe.each(testBackends())('lead list: cursor paging and trigram search (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let workspaceId: string;
  const list = async (qs: string): Promise<ListAnswer> => {
    const r = await b.call('GET', `${base}/leads?${qs}`);
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };
  const emails = (a: ListAnswer) => a.leads.map((l) => l.email);

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'List Co', 'owner@list.test');
    workspaceId = w.workspaceId;
    b = await login(h.app, 'owner@list.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    // Created through the route: created_at is the server's now(), which has microseconds.
    for (const [email, firstName, lastName, company] of [
      ['ana@acme.test', 'Ana', 'Smith', 'Acme'],
      ['bo@zeta.test', 'Bo', 'Acmeson', 'Zeta'],
      ['cy@other.test', 'Cy', 'Smith', 'Acme Labs'],
      ['di@other.test', 'Di', null, '100% Pure'],
    ] as const) {
      const r = await b.call('POST', `${base}/leads`, { email, firstName, lastName, company });
      expect(r.statusCode, r.body).toBe(201);
    }
    // Six leads with one creation time: only the id orders them, and a page boundary falls among them.
    await sql`
      insert into lead (id, workspace_id, email, email_norm, created_at)
      select gen_random_uuid(), ${workspaceId}, 'same' || g || '@tie.test', 'same' || g || '@tie.test', timestamptz '2026-01-01 00:00:00.123456+00'
      from generate_series(1, 6) g`.execute(h.store.db);
  });
  afterAll(() => h?.close());

  it('pages newest first by cursor, every lead once, counting only on the first page', async () => {
    const all = await list('limit=200');
    expect(all.total).toBe(10);
    expect(all.totalExact).toBe(true);
    expect(all.nextCursor).toBeNull();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const p: ListAnswer = await list(`limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(p.leads.length).toBeLessThanOrEqual(3);
      if (pages === 0) expect(p.total).toBe(10);
      else expect([p.total, p.totalExact]).toEqual([null, false]);
      seen.push(...emails(p));
      cursor = p.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(4);
    expect(seen).toEqual(emails(all));
    expect(new Set(seen).size).toBe(10);
    // The four created just now come first, the six of 2026-01-01 after them.
    expect(seen.slice(4).every((e) => e.endsWith('@tie.test'))).toBe(true);
    expect((await b.call('GET', `${base}/leads?cursor=bm90LWEtY3Vyc29y`)).statusCode).toBe(400);
  });

  it('a search pages by cursor too', async () => {
    const first = await list('search=tie.test&limit=4');
    expect([first.leads.length, first.total]).toEqual([4, 6]);
    const rest = await list(`search=tie.test&limit=4&cursor=${first.nextCursor}`);
    expect(rest.leads.length).toBe(2);
    expect(rest.nextCursor).toBeNull();
    expect(new Set([...emails(first), ...emails(rest)]).size).toBe(6);
  });

  it('finds a substring of the email, "first last" or company in any case, never across two fields', async () => {
    expect(emails(await list('search=ACME')).sort()).toEqual(['ana@acme.test', 'bo@zeta.test', 'cy@other.test']);
    expect(emails(await list('search=ana%20smith'))).toEqual(['ana@acme.test']);
    expect(emails(await list('search=other.te'))).toEqual(['di@other.test', 'cy@other.test']);
    expect(emails(await list('search=acme%20labs'))).toEqual(['cy@other.test']);
    // "smith" is a last name and "acme" a company: one term spans two fields, so no match.
    expect((await list('search=smith%20acme')).total).toBe(0);
    // LIKE wildcards are literal.
    expect(emails(await list('search=100%25'))).toEqual(['di@other.test']);
    expect((await list('search=_')).total).toBe(0);
    // An edit is searchable at once (the column is generated).
    const bo = (await list('search=bo@zeta')).leads[0]!;
    expect((await b.call('PATCH', `${base}/leads/${bo.id}`, { company: 'Quokka' })).statusCode).toBe(200);
    expect(emails(await list('search=quokka'))).toEqual(['bo@zeta.test']);
  });

  it('serves the search from the trigram index (pg_trgm loaded on this backend)', async () => {
    const plan = await h.store.db.connection().execute(async (c) => {
      await sql`set enable_seqscan = off`.execute(c);
      try {
        return await sql<{ 'QUERY PLAN': string }>`explain select id from lead where search_text ilike '%acme%'`.execute(c);
      } finally {
        await sql`reset enable_seqscan`.execute(c);
      }
    });
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('lead_search');
  });

  it('stops counting at 10,000 and says the total is a lower bound', async () => {
    await sql`
      insert into lead (id, workspace_id, email, email_norm, created_at)
      select gen_random_uuid(), ${workspaceId}, 'bulk' || g || '@bulk.test', 'bulk' || g || '@bulk.test', now() - (g || ' seconds')::interval
      from generate_series(1, 10001) g`.execute(h.store.db);
    const p = await list('limit=5');
    expect([p.total, p.totalExact, p.leads.length]).toEqual([10_000, false, 5]);
    expect(p.nextCursor).not.toBeNull();
    expect(await list('search=@bulk.test&limit=1')).toMatchObject({ total: 10_000, totalExact: false });
    expect(await list('search=@tie.test&limit=1')).toMatchObject({ total: 6, totalExact: true });
  });

  it('filters by country, sequence and enrollment state, with the search and the cursor', async () => {
    const g = await seedGraph(h.store, workspaceId, 'filters', null);
    await sql`update lead set country = 'FR' where workspace_id = ${workspaceId} and email in ('ana@acme.test', 'cy@other.test', 'lead-filters@prospects.test')`.execute(h.store.db);
    expect(emails(await list('country=fr'))).toEqual(['lead-filters@prospects.test', 'cy@other.test', 'ana@acme.test']);
    expect(emails(await list('country=FR&search=smith'))).toEqual(['cy@other.test', 'ana@acme.test']);
    const inSeq = `sequenceId=${g.sequenceId}`;
    expect(await list(inSeq)).toMatchObject({ total: 1, leads: [{ email: 'lead-filters@prospects.test' }] });
    expect(emails(await list(`${inSeq}&state=active`))).toEqual(['lead-filters@prospects.test']);
    expect(emails(await list(`${inSeq}&state=replied`))).toEqual([]);
    await sql`update enrollment set state = 'replied' where id = ${g.enrollmentId}`.execute(h.store.db);
    expect(emails(await list('state=replied'))).toEqual(['lead-filters@prospects.test']);
    // none: never enrolled (here, in this sequence); every lead but one, paged by the same cursor.
    const first = await list('country=FR&state=none&limit=1');
    expect([first.total, emails(first)]).toEqual([2, ['cy@other.test']]);
    expect(emails(await list(`country=FR&state=none&limit=1&cursor=${first.nextCursor}`))).toEqual(['ana@acme.test']);
    expect((await list(`${inSeq}&state=none&limit=1`)).total).toBe(10_000);
    expect((await b.call('GET', `${base}/leads?country=FRA`)).statusCode).toBe(400);
    expect((await b.call('GET', `${base}/leads?state=sleeping`)).statusCode).toBe(400);
  });
});
