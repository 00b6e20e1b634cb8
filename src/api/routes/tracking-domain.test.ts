import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, joinByInvitation, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { domainOfWorkspace, storeCertificate } from '../../tracking/domains/sql/tracking-domain.ts';

describe.each(testBackends())('tracking domain routes (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let other: string;
  let owner: Browser;
  let member: Browser;
  let otherOwner: Browser;
  let nudges = 0;

  beforeAll(async () => {
    h = await apiHarness(backend, { trackingDomains: { publicHost: 'cadenza.test', nudge: () => void nudges++ } });
    const a = await seedWorkspace(h.store, 'A', 'owner@a.test');
    const b = await seedWorkspace(h.store, 'B', 'owner@b.test');
    ws = a.workspaceId;
    other = b.workspaceId;
    owner = await login(h.app, 'owner@a.test', a.password);
    otherOwner = await login(h.app, 'owner@b.test', b.password);
    member = await joinByInvitation(h.app, owner, ws, 'member@a.test', 'member');
  }, 60_000);
  afterAll(async () => h?.close());

  const url = () => `/api/workspaces/${ws}/tracking-domain`;

  it('sets a host pending its CNAME, shows it, and nudges the job once', async () => {
    expect((await owner.call('GET', url())).json()).toEqual({ domain: null, enabled: true, cnameTarget: 'cadenza.test' });
    const r = await owner.call('PUT', url(), { host: ' Track.Customer.TEST. ' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ host: 'track.customer.test', state: 'pending_dns', reason: null, cnameTarget: 'cadenza.test', certificate: null });
    expect(nudges).toBe(1);
    // The same host again changes nothing and does not nudge.
    expect((await owner.call('PUT', url(), { host: 'track.customer.test' })).statusCode).toBe(200);
    expect(nudges).toBe(1);
    expect((await member.call('GET', url())).json()).toMatchObject({ domain: { host: 'track.customer.test', state: 'pending_dns' } });
  });

  it('refuses a malformed host, our own name, and a host another workspace has, with the reason', async () => {
    for (const [host, code, words] of [
      ['https://track.customer.test/x', 'INVALID_INPUT', 'bare host name'],
      ['localhost', 'INVALID_INPUT', 'two labels'],
      ['links.cadenza.test', 'INVALID_INPUT', "installation's own name"],
    ] as const) {
      const r = await owner.call('PUT', url(), { host });
      expect(r.statusCode).toBe(400);
      expect(r.json().error).toMatchObject({ code, details: { field: 'host' } });
      expect(r.json().error.message).toContain(words);
    }
    const taken = await otherOwner.call('PUT', `/api/workspaces/${other}/tracking-domain`, { host: 'track.customer.test' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().error.message).toContain('another workspace');
  });

  it('a new host replaces the old one, pending again', async () => {
    const r = await owner.call('PUT', url(), { host: 'links.customer.test' });
    expect(r.json()).toMatchObject({ host: 'links.customer.test', state: 'pending_dns', certificate: null });
    expect(nudges).toBe(2);
    // The old name is free for another workspace now.
    expect((await otherOwner.call('PUT', `/api/workspaces/${other}/tracking-domain`, { host: 'track.customer.test' })).statusCode).toBe(200);
  });

  it('shows the certificate once stored: its validity and when it was issued or last renewed', async () => {
    const row = (await domainOfWorkspace(h.store.db, ws))!;
    const at = Date.UTC(2026, 4, 1);
    expect(await storeCertificate(h.store.db, row, { sealed: Buffer.from('sealed'), notBefore: at, notAfter: at + 90 * 86_400_000, nextAttemptAt: at + 60 * 86_400_000 }, at + 5000)).toBe(true);
    expect((await member.call('GET', url())).json().domain).toMatchObject({
      host: 'links.customer.test',
      state: 'active',
      certificate: { notBefore: '2026-05-01T00:00:00.000Z', notAfter: '2026-07-30T00:00:00.000Z', issuedAt: '2026-05-01T00:00:05.000Z' },
    });
  });

  it('only an admin changes it; verify makes it due now; delete removes it', async () => {
    expect((await member.call('PUT', url(), { host: 'other.customer.test' })).statusCode).toBe(403);
    expect((await member.call('DELETE', url())).statusCode).toBe(403);
    const v = await owner.call('POST', `${url()}/verify`);
    expect(v.statusCode).toBe(202);
    expect(Date.parse(v.json().nextCheckAt)).toBeLessThanOrEqual(Date.now());
    expect(nudges).toBe(4);
    expect((await owner.call('DELETE', url())).json()).toEqual({ removed: true });
    expect((await owner.call('DELETE', url())).json()).toEqual({ removed: false });
    expect((await owner.call('POST', `${url()}/verify`)).statusCode).toBe(404);
  });
});
