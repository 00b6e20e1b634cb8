import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { nodeResolver } from '../../common/dns-resolver.ts';
import { HygieneChecker } from '../../leads/hygiene/checker.ts';
import { apiHarness, login, seedGraph, seedWorkspace, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { testBackends } from '../../../test/stores.ts';

/** The import report's counts, the leads filter, the review queue (decide, export) and enrolling through the API. */
describe.each(testBackends())('list hygiene routes (%s)', (backend) => {
  let h: ApiHarness;
  let dns: TestDnsServer;
  let resolver: ReturnType<typeof nodeResolver>;
  let ws: string;
  let other: string;
  let owner: Browser;
  let stranger: Browser;
  let g: ObjectIds;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    dns.setMx('acme.test', [{ exchange: 'mx.acme.test', priority: 10 }]);
    dns.setMx('closed.test', [{ exchange: '.', priority: 0 }]);
    resolver = nodeResolver({ server: dns.address, timeoutMs: 2000 });
    h = await apiHarness(backend, { hygiene: new HygieneChecker(resolver, systemClock, { timeoutMs: 1000 }) });
    const a = await seedWorkspace(h.store, 'A', 'owner@example.test');
    const b = await seedWorkspace(h.store, 'B', 'owner-b@example.test');
    ws = a.workspaceId;
    other = b.workspaceId;
    g = await seedGraph(h.store, ws, 'a', a.userId);
    owner = await login(h.app, 'owner@example.test', a.password);
    stranger = await login(h.app, 'owner-b@example.test', b.password);
  }, 60_000);
  afterAll(async () => {
    resolver?.cancel();
    await Promise.all([h?.close(), dns?.close()]);
  });

  type Lead = { id: string; email: string; hygiene: { verdict: string; reasons: Array<{ code: string }>; review: string | null } | null };
  const leads = async (q: string) => (await owner.call('GET', `/api/workspaces/${ws}/leads?${q}`)).json<{ leads: Lead[] }>().leads;

  it('an import reports its leads by verdict, and the leads list filters by verdict', async () => {
    const csv = 'email\nana@acme.test\ninfo@acme.test\nsupport@acme.test\nbob@closed.test\ncy@temp-mail.org\n';
    const r = await owner.call('POST', `/api/workspaces/${ws}/leads/import`, { csv });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ imported: 5, hygiene: { valid: 1, risky: 2, invalid: 2 } });
    expect((await leads('verdict=invalid')).map((l) => l.email).sort()).toEqual(['bob@closed.test', 'cy@temp-mail.org']);
    expect((await leads('verdict=review')).map((l) => l.email).sort()).toEqual(['info@acme.test', 'support@acme.test']);
    const ana = (await leads('verdict=valid'))[0]!;
    expect(ana).toMatchObject({ email: 'ana@acme.test', hygiene: { verdict: 'valid', reasons: [], review: null } });
    // The seeded lead was never checked.
    expect((await leads('verdict=unchecked')).map((l) => l.email)).toEqual(['lead-a@prospects.test']);
    expect((await owner.call('GET', `/api/workspaces/${ws}/leads?verdict=maybe`)).statusCode).toBe(400);
  });

  it('the review queue lists, exports and decides; another workspace sees none of it', async () => {
    const q = (await owner.call('GET', `/api/workspaces/${ws}/leads/review?limit=1`)).json<{ leads: Array<{ id: string; email: string; reasons: Array<{ code: string }> }>; nextCursor: string; waiting: number }>();
    expect(q.waiting).toBe(2);
    expect(q.leads[0]!.reasons.map((r) => r.code)).toEqual(['role_account']);
    const p2 = (await owner.call('GET', `/api/workspaces/${ws}/leads/review?limit=1&cursor=${q.nextCursor}`)).json<{ leads: Array<{ id: string; email: string }> }>();
    const [first, second] = [q.leads[0]!, p2.leads[0]!];
    expect([first.email, second.email].sort()).toEqual(['info@acme.test', 'support@acme.test']);

    const csv = await owner.call('GET', `/api/workspaces/${ws}/leads/review/export`);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('email,first_name,last_name,company,reasons,checked_at');
    expect(lines.slice(1).map((l) => l.split(',')[0]).sort()).toEqual(['info@acme.test', 'support@acme.test']);
    expect(lines[1]).toContain(',role_account,');

    // Another workspace: the queue is its own (empty), and a decision on these ids decides nothing.
    expect((await stranger.call('GET', `/api/workspaces/${other}/leads/review`)).json()).toMatchObject({ leads: [], waiting: 0 });
    expect((await stranger.call('GET', `/api/workspaces/${ws}/leads/review`)).statusCode).toBe(404);
    expect((await stranger.call('POST', `/api/workspaces/${other}/leads/review`, { leadIds: [first.id], decision: 'approve' })).json()).toEqual({ decided: 0, notRisky: 1 });

    const ok = await owner.call('POST', `/api/workspaces/${ws}/leads/review`, { leadIds: [first.id], decision: 'approve' });
    expect(ok.json()).toEqual({ decided: 1, notRisky: 0 });
    expect((await owner.call('POST', `/api/workspaces/${ws}/leads/review`, { leadIds: [second.id, g.leadId], decision: 'reject' })).json()).toEqual({ decided: 1, notRisky: 1 });
    expect((await owner.call('GET', `/api/workspaces/${ws}/leads/review`)).json()).toMatchObject({ leads: [], waiting: 0 });
  });

  it('enrolling checks unchecked leads first, skips the invalid and holds the risky not approved, and says how many', async () => {
    const imported = await owner.call('POST', `/api/workspaces/${ws}/leads/import`, { csv: 'email\nsales@acme.test\n' });
    expect(imported.json()).toMatchObject({ hygiene: { risky: 1 } });
    const all = await leads('limit=50');
    const r = await owner.call('POST', `/api/workspaces/${ws}/sequences/${g.sequenceId}/enroll`, { leadIds: all.map((l) => l.id) });
    expect(r.statusCode).toBe(200);
    const body = r.json<{ enrolled: number; invalid: number; held: number; refused: Array<{ email: string; reason: string }> }>();
    // Enrolled: ana and the approved role account. Invalid: support@ (rejected on review), the null MX, the
    // disposable domain. The seeded lead, checked now, was enrolled already (that refusal comes first).
    expect({ enrolled: body.enrolled, invalid: body.invalid, held: body.held }).toEqual({ enrolled: 2, invalid: 3, held: 1 });
    expect(body.refused.find((x) => x.email === 'sales@acme.test')?.reason).toBe('held_for_review');
    expect((await leads('verdict=unchecked')).length).toBe(0);
  });

  it('re-checks leads on demand, through the cache (a null MX is remembered for the negative TTL)', async () => {
    dns.setMx('closed.test', [{ exchange: 'mx.closed.test', priority: 10 }]);
    const bob = (await leads('verdict=invalid')).find((l) => l.email === 'bob@closed.test')!;
    const r = await owner.call('POST', `/api/workspaces/${ws}/leads/hygiene/check`, { leadIds: [bob.id, g.leadId] });
    expect(r.json()).toEqual({ valid: 0, risky: 0, invalid: 2 });
    expect((await stranger.call('POST', `/api/workspaces/${other}/leads/hygiene/check`, { leadIds: [bob.id] })).json()).toEqual({ valid: 0, risky: 0, invalid: 0 });
  });
});
