import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedGraph, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

interface Checklist {
  visible: boolean;
  dismissedAt: string | null;
  items: Array<{ key: string; done: boolean; detail: string; path: string }>;
}

describe.each(testBackends())('getting started checklist (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let userId: string;
  let owner: Browser;
  const read = async () => {
    const r = await owner.call('GET', `/api/workspaces/${ws}/getting-started`);
    expect(r.statusCode).toBe(200);
    return r.json<Checklist>();
  };
  const done = (c: Checklist) => Object.fromEntries(c.items.map((i) => [i.key, i.done]));

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'New', 'new-owner@example.test');
    ({ workspaceId: ws, userId } = w);
    owner = await login(h.app, 'new-owner@example.test', w.password);
  }, 60_000);
  afterAll(async () => h?.close());

  it('a new workspace has nothing done; each item ticks itself as the workspace fills, and the list goes when all are done', async () => {
    const empty = await read();
    expect(empty.visible).toBe(true);
    expect(done(empty)).toEqual({ mailbox: false, domain: false, leads: false, sequence: false, launch: false });
    expect(empty.items.map((i) => i.path)).toEqual(['/mailboxes', '/domains', '/leads', '/sequences', '/sequences']);

    // A mailbox added with its test skipped is not enough: the item says why.
    await h.store.db.insertInto('mailbox').values({ id: '0190a000-0000-7000-8000-000000000001', workspace_id: ws, user_id: userId, email: 'untested@example.test', provider: 'smtp_imap', settings: { verification: { state: 'skipped', at: '2026-01-01T00:00:00Z' } } }).execute();
    const untested = await read();
    expect(done(untested).mailbox).toBe(false);
    expect(untested.items[0]!.detail).toMatch(/test has not passed/);

    // The seeded graph: a mailbox without a verification record (proved), a lead, a two-step sequence, an enrollment.
    await seedGraph(h.store, ws, 'gs', userId);
    expect(done(await read())).toEqual({ mailbox: true, domain: false, leads: true, sequence: true, launch: true });

    // A broken domain is checked but not verified; a healthy one ticks the item.
    const row = { workspace_id: ws, domain: 'example.test', purpose: 'sending' as const, checks: '[]', checked_at: new Date() };
    await h.store.db.insertInto('domain_health').values({ ...row, verdict: 'broken', status: 'broken' }).execute();
    const broken = await read();
    expect(done(broken).domain).toBe(false);
    expect(broken.items[1]!.detail).toMatch(/missing or wrong/);
    // A lookup that failed (unknown) keeps the last conclusive status: still broken.
    await sql`update domain_health set verdict = 'unknown' where workspace_id = ${ws}`.execute(h.store.db);
    expect(done(await read()).domain).toBe(false);
    await sql`update domain_health set verdict = 'ok', status = 'ok' where workspace_id = ${ws}`.execute(h.store.db);
    const all = await read();
    expect(all.items.every((i) => i.done)).toBe(true);
    expect(all.visible).toBe(false);
    expect(all.dismissedAt).toBeNull();
  });

  it('dismissing hides an unfinished checklist for the workspace; it takes no other input', async () => {
    await sql`update domain_health set status = 'broken' where workspace_id = ${ws}`.execute(h.store.db);
    expect((await read()).visible).toBe(true);
    expect((await owner.call('POST', `/api/workspaces/${ws}/getting-started/dismiss`, { items: ['domain'] })).statusCode).toBe(400);
    const r = await owner.call('POST', `/api/workspaces/${ws}/getting-started/dismiss`, {});
    expect(r.statusCode).toBe(200);
    const after = r.json<Checklist>();
    expect(after.visible).toBe(false);
    expect(after.dismissedAt).not.toBeNull();
    // The items still say the truth: dismissing ticks nothing.
    expect(done(after).domain).toBe(false);
    expect((await read()).visible).toBe(false);
  });
});
