import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerFixture, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('suppression routes (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let g: ObjectIds;

  beforeAll(async () => {
    ({ h, ws, owner, g } = await ownerFixture(backend));
  }, 60_000);
  afterAll(async () => h?.close());

  it('suppressing a lead stops its live enrollment; a bad address is a 400 naming it', async () => {
    const bad = await owner.call('POST', `/api/workspaces/${ws}/suppressions`, { email: 'no-at-sign' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'email' } });
    const r = await owner.call('POST', `/api/workspaces/${ws}/suppressions`, { email: 'Lead-A@Prospects.test' });
    expect(r.statusCode).toBe(201);
    expect(r.json()).toEqual({ email: 'lead-a@prospects.test', added: 1, stopped: 1 });
    const e = await h.store.db.selectFrom('enrollment').select('state').where('id', '=', g.enrollmentId!).executeTakeFirstOrThrow();
    expect(e.state).toBe('stopped');
    const again = await owner.call('POST', `/api/workspaces/${ws}/suppressions`, { email: 'lead-a@prospects.test' });
    expect(again.json()).toMatchObject({ added: 0, stopped: 0 });
  });

  it('imports a CSV with an email column and reports the rows that are not addresses', async () => {
    const csv = 'name;Email\nAnn;ann@prospects.test\nBob;bob at prospects\nCy;CY@prospects.test\n';
    const r = await owner.call('POST', `/api/workspaces/${ws}/suppressions/import`, { csv });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ read: 2, added: 2, rejected: [{ line: 3, value: 'bob at prospects' }] });
    const list = await owner.call('GET', `/api/workspaces/${ws}/suppressions?q=prospects&limit=2`);
    const p1 = list.json<{ suppressions: Array<{ email: string }>; nextAfter: string }>();
    expect(p1.suppressions.map((s) => s.email)).toEqual(['ann@prospects.test', 'cy@prospects.test']);
    const p2 = (await owner.call('GET', `/api/workspaces/${ws}/suppressions?q=prospects&limit=2&after=${encodeURIComponent(p1.nextAfter)}`)).json<{ suppressions: Array<{ email: string }> }>();
    expect(p2.suppressions.map((s) => s.email)).toEqual(['gone-a@prospects.test', 'lead-a@prospects.test']);
    expect((await owner.call('POST', `/api/workspaces/${ws}/suppressions/import`, { csv: '' })).statusCode).toBe(400);
  });

  it('exports CSV, and lifting a suppression removes it', async () => {
    const r = await owner.call('GET', `/api/workspaces/${ws}/suppressions/export`);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('text/csv');
    const lines = r.body.trim().split('\r\n');
    expect(lines[0]).toBe('email,reason,source,created_at');
    expect(lines.some((l) => l.startsWith('gone-a@prospects.test,manual,seed,'))).toBe(true);
    expect((await owner.call('DELETE', `/api/workspaces/${ws}/suppressions/gone-a@prospects.test`)).statusCode).toBe(200);
    expect((await owner.call('DELETE', `/api/workspaces/${ws}/suppressions/gone-a@prospects.test`)).statusCode).toBe(404);
  });

  it('a lift is in the audit log with the reason given, in the same transaction', async () => {
    await owner.call('POST', `/api/workspaces/${ws}/suppressions`, { email: 'back@prospects.test', reason: 'unsubscribe' });
    expect((await owner.call('DELETE', `/api/workspaces/${ws}/suppressions/back@prospects.test`, { reason: '' })).statusCode).toBe(400);
    const r = await owner.call('DELETE', `/api/workspaces/${ws}/suppressions/back@prospects.test`, { reason: 'Asked to hear from us again' });
    expect(r.statusCode).toBe(200);
    const log = await h.store.db.selectFrom('audit_event').select(['action', 'target', 'detail', 'actor_label']).where('workspace_id', '=', ws).where('action', '=', 'suppression.lifted').execute();
    expect(log).toEqual(
      expect.arrayContaining([
        { action: 'suppression.lifted', target: 'back@prospects.test', detail: { suppressedFor: 'unsubscribe', reason: 'Asked to hear from us again' }, actor_label: 'owner@example.test' },
        // The lift before this test gave no reason (the body is optional for scripts): still recorded.
        { action: 'suppression.lifted', target: 'gone-a@prospects.test', detail: { suppressedFor: 'manual', reason: null }, actor_label: 'owner@example.test' },
      ]),
    );
    // Not suppressed: a 404 and nothing logged.
    expect((await owner.call('DELETE', `/api/workspaces/${ws}/suppressions/back@prospects.test`, { reason: 'again' })).statusCode).toBe(404);
    expect(await h.store.db.selectFrom('audit_event').select('id').where('workspace_id', '=', ws).where('action', '=', 'suppression.lifted').execute()).toHaveLength(2);
  });
});
