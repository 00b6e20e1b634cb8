import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, joinByInvitation, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { recordAudit, SYSTEM_ACTOR } from '../audit/audit-log.ts';
import { purgeAuditLog } from '../audit/retention.ts';

const DAY = 86_400_000;

describe.each(testBackends())('the workspace audit log (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let ownerPassword: string;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const a = await seedWorkspace(h.store, 'Acme', 'owner@example.test');
    ws = a.workspaceId;
    ownerPassword = a.password;
    owner = await login(h.app, 'owner@example.test', a.password);
  }, 60_000);
  afterAll(async () => h?.close());

  type Ev = { action: string; actor: string; actorKind: string; target: string | null; detail: Record<string, unknown> };
  const events = async (query = '', by = owner): Promise<Ev[]> => {
    const r = await by.call('GET', `/api/workspaces/${ws}/audit-log${query}`);
    expect(r.statusCode, r.body).toBe(200);
    return r.json().events;
  };

  it('records who did what: sign-ins, members, roles, keys, invitations, mailboxes, exports and settings', async () => {
    await h.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '192.0.2.9', payload: { email: 'owner@example.test', password: 'not the password' } });
    await login(h.app, 'owner@example.test', ownerPassword);
    const rep = await joinByInvitation(h.app, owner, ws, 'rep@example.test', 'admin');
    const members = (await owner.call('GET', `/api/workspaces/${ws}/members`)).json().members as { id: string; email: string }[];
    const repId = members.find((m) => m.email === 'rep@example.test')!.id;
    const key = await rep.call('POST', `/api/workspaces/${ws}/api-keys`, { name: 'crm sync' });
    await owner.call('DELETE', `/api/workspaces/${ws}/api-keys/${key.json().id}`);
    await owner.call('PATCH', `/api/workspaces/${ws}/members/${repId}`, { role: 'member' });
    const mb = await owner.call('POST', `/api/workspaces/${ws}/mailboxes`, {
      email: 'box@example.test',
      verify: false,
      password: 'app password',
      smtp: { host: 'smtp.example.test', port: 587, security: 'starttls' },
      imap: { host: 'imap.example.test', port: 993, security: 'tls' },
    });
    expect(mb.statusCode, mb.body).toBe(201);
    expect((await owner.call('DELETE', `/api/workspaces/${ws}/mailboxes/${mb.json().id}`)).statusCode).toBe(200);
    await owner.call('GET', `/api/workspaces/${ws}/suppressions/export`);
    await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { holidaysCountry: 'FR' });
    await owner.call('DELETE', `/api/workspaces/${ws}/members/${repId}`);

    const log = await events('?limit=200');
    const got = log.map((e) => `${e.action} ${e.actor} → ${e.target}`).reverse();
    expect(got).toEqual([
      'signin.succeeded owner@example.test → owner@example.test',
      'signin.failed owner@example.test → owner@example.test',
      'signin.succeeded owner@example.test → owner@example.test',
      'invitation.sent owner@example.test → rep@example.test',
      'invitation.accepted rep@example.test → rep@example.test',
      'member.added rep@example.test → rep@example.test',
      'api_key.created rep@example.test → crm sync (' + key.json().prefix + '…)',
      'api_key.revoked owner@example.test → crm sync (' + key.json().prefix + '…)',
      'member.role_changed owner@example.test → rep@example.test',
      'mailbox.connected owner@example.test → box@example.test',
      'mailbox.removed owner@example.test → box@example.test',
      'export.downloaded owner@example.test → suppressions.csv',
      'settings.changed owner@example.test → workspace',
      'member.removed owner@example.test → rep@example.test',
    ]);
    expect(log.find((e) => e.action === 'signin.failed')).toMatchObject({ actorKind: 'anonymous', ip: '192.0.2.9' });
    expect(log.find((e) => e.action === 'member.role_changed')!.detail).toMatchObject({ from: 'admin', to: 'member' });
    expect(log.find((e) => e.action === 'settings.changed')!.detail).toEqual({ holidaysCountry: { from: null, to: 'FR' } });
  });

  it('filters by action group, actor, target and time, and pages with a cursor', async () => {
    expect((await events('?action=member')).map((e) => e.action).sort()).toEqual(['member.added', 'member.removed', 'member.role_changed']);
    expect((await events('?action=api_key.created')).map((e) => e.actor)).toEqual(['rep@example.test']);
    expect((await events('?actor=REP@')).every((e) => e.actor === 'rep@example.test')).toBe(true);
    expect((await events('?target=box@')).map((e) => e.action)).toEqual(['mailbox.removed', 'mailbox.connected']);
    expect(await events(`?from=${new Date(Date.now() + DAY).toISOString()}`)).toEqual([]);
    const first = (await owner.call('GET', `/api/workspaces/${ws}/audit-log?limit=5`)).json();
    const second = (await owner.call('GET', `/api/workspaces/${ws}/audit-log?limit=5&before=${first.nextBefore}`)).json();
    const all = await events('?limit=200');
    expect([...first.events, ...second.events].map((e: { id: string }) => e.id)).toEqual(all.slice(0, 10).map((e) => (e as unknown as { id: string }).id));
    expect((await owner.call('GET', `/api/workspaces/${ws}/audit-log?before=not-a-cursor`)).statusCode).toBe(400);
  });

  it('is for admins and owners only', async () => {
    const member = await joinByInvitation(h.app, owner, ws, 'just-a-member@example.test', 'member');
    expect((await member.call('GET', `/api/workspaces/${ws}/audit-log`)).statusCode).toBe(403);
    expect((await member.call('GET', `/api/workspaces/${ws}/audit-log.csv`)).statusCode).toBe(403);
  });

  it('exports CSV with formula-looking cells neutralised, and records the download', async () => {
    await owner.call('POST', `/api/workspaces/${ws}/api-keys`, { name: '=HYPERLINK("http://evil.example/","x")' });
    const r = await owner.call('GET', `/api/workspaces/${ws}/audit-log.csv?action=api_key`);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/csv/);
    const lines = r.body.trim().split('\r\n');
    expect(lines[0]).toBe('at,action,actor_kind,actor,target,ip,detail');
    expect(r.body).toContain(`"'=HYPERLINK(""http://evil.example/"",""x"") (`);
    for (const line of lines.slice(1)) expect(line.split(',').every((cell) => !/^[=+\-@]/.test(cell))).toBe(true);
    expect((await events('?action=export.downloaded')).map((e) => e.target)).toContain('audit-log.csv');
  });

  it('is append-only: no update or delete but the retention purge, which keeps what is within the setting', async () => {
    await expect(sql`update audit_event set action = 'member.added'`.execute(h.store.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_event`.execute(h.store.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate audit_event`.execute(h.store.db)).rejects.toThrow(/append-only/);
    // An event 40 days old: kept by the default year, purged once the workspace keeps 30 days.
    const old = { ...systemClock, now: () => Date.now() - 40 * DAY };
    await recordAudit(h.store.db, { clock: old, random: seededRandom('old') }, { workspaceId: ws, action: 'settings.changed', actor: SYSTEM_ACTOR, target: 'old one' });
    expect((await purgeAuditLog(h.store, systemClock)).deleted).toBe(0);
    expect((await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { auditRetentionDays: 7 })).statusCode).toBe(400);
    const set = await owner.call('PATCH', `/api/workspaces/${ws}/settings`, { auditRetentionDays: 30 });
    expect(set.json().auditRetentionDays).toBe(30);
    const before = (await events('?limit=200')).length;
    expect((await purgeAuditLog(h.store, systemClock)).deleted).toBe(1);
    expect(await events('?target=old one')).toEqual([]);
    expect((await events('?limit=200')).length).toBe(before - 1);
    // The purge's permission ended with its transaction.
    await expect(sql`delete from audit_event`.execute(h.store.db)).rejects.toThrow(/append-only/);
  });
});
