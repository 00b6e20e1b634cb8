import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { rspamdScorer } from '../../sending/content-check/rspamd-scorer.ts';
import { domainOfWorkspace, removeDomain, setDomain, storeCertificate } from '../../tracking/domains/sql/tracking-domain.ts';

/** A loopback port nobody listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

// PGlite only: the route's SQL is the sequence and lead queries other tests run on both backends.
describe('content check route (pglite)', () => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let sequenceId: string;
  beforeAll(async () => {
    h = await apiHarness('pglite', { contentScorer: rspamdScorer({ url: `http://127.0.0.1:${await closedPort()}`, timeoutMs: 2_000 }) });
    const w = await seedWorkspace(h.store, 'Check Co', 'owner@check.test');
    b = await login(h.app, 'owner@check.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    await b.call('POST', `${base}/leads/import`, { csv: 'email,first_name,company\nana@acme.test,Ana,Acme\n' });
    const put = await b.call('PUT', `${base}/sequences`, {
      key: 'launch',
      name: 'Launch',
      window: 'Mon-Fri 09:00-17:00',
      trackOpens: true,
      steps: [
        { key: 'plain', type: 'email', delay: '0 minutes', subject: 'A question for {{company}}', body: 'Hi {{first_name}},\n\nI saw Acme is hiring support agents this quarter. We help teams onboard new agents in half the time. Would a short call next week make sense?\n\nBest,\nRep', title: '', variants: [] },
        { key: 'loud', type: 'email', delay: '2 days', subject: 'ACT NOW: FREE MONEY INSIDE', body: 'CLICK HERE http://203.0.113.7/win http://a.test/1 http://a.test/2 guaranteed winner, limited time!', title: '', variants: [] },
        { key: 'call', type: 'call', delay: '1 day', subject: '', body: '', title: 'Call', variants: [] },
      ],
    });
    expect(put.statusCode, put.body).toBe(200);
    sequenceId = put.json().sequenceId;
  });
  afterAll(() => h?.close());

  it("renders the step for the oldest lead and answers Cadenza's findings, and the scorer's state when rspamd is not there", async () => {
    const r = await b.call('POST', `${base}/sequences/${sequenceId}/steps/plain/content-check`, {});
    expect(r.statusCode, r.body).toBe(200);
    const j = r.json();
    expect(j).toMatchObject({ step: 'plain', variant: 'a', rendered: true, subject: 'A question for Acme', lead: { email: 'ana@acme.test' }, score: { status: 'not_installed', reason: expect.stringMatching(/not installed/) } });
    // Open tracking on Cadenza's own address: the one warning.
    expect(j.findings.filter((f: { level: string }) => f.level !== 'ok')).toEqual([{ code: 'tracking_domain', level: 'warn', message: expect.stringMatching(/open pixel/) }]);
    expect(j.level).toBe('warn');
  });

  it('agrees with the sender on a custom tracking host: a warning while it is not active, ok once its certificate is issued', async () => {
    const workspaceId = base.split('/').pop()!;
    const now = Date.now();
    expect(await setDomain(h.store.db, workspaceId, 'track.check.test', now)).toBe('set');
    const finding = async () => (await b.call('POST', `${base}/sequences/${sequenceId}/steps/plain/content-check`, {})).json().findings.find((f: { code: string }) => f.code === 'tracking_domain');
    expect(await finding()).toEqual({ code: 'tracking_domain', level: 'warn', message: expect.stringContaining('your tracking host track.check.test is not active (its CNAME is not verified yet)') });
    const row = (await domainOfWorkspace(h.store.db, workspaceId))!;
    expect(await storeCertificate(h.store.db, row, { sealed: Buffer.from('sealed'), notBefore: now, notAfter: now + 90 * 86_400_000, nextAttemptAt: now + 60 * 86_400_000 }, now)).toBe(true);
    expect(await finding()).toEqual({ code: 'tracking_domain', level: 'ok', message: 'an open pixel on your own tracking domain track.check.test' });
    await removeDomain(h.store.db, workspaceId);
    expect((await finding()).level).toBe('warn');
  });

  it('flags spammy content', async () => {
    const j = (await b.call('POST', `${base}/sequences/${sequenceId}/steps/loud/content-check`, {})).json();
    expect(j.level).toBe('bad');
    expect(j.findings.filter((f: { level: string }) => f.level === 'bad').map((f: { code: string }) => f.code).sort()).toEqual(['all_caps', 'links_per_word', 'links_per_word', 'spam_phrases']);
  });

  it('answers clear errors: a call step, an unknown step or variant, an unknown lead', async () => {
    const call = await b.call('POST', `${base}/sequences/${sequenceId}/steps/call/content-check`, {});
    expect(call.statusCode).toBe(400);
    expect(call.json().error.message).toMatch(/call step/);
    expect((await b.call('POST', `${base}/sequences/${sequenceId}/steps/nope/content-check`, {})).statusCode).toBe(404);
    expect((await b.call('POST', `${base}/sequences/${sequenceId}/steps/plain/content-check`, { variant: 'z' })).statusCode).toBe(404);
    expect((await b.call('POST', `${base}/sequences/${sequenceId}/steps/plain/content-check`, { leadId: '00000000-0000-4000-8000-000000000000' })).statusCode).toBe(404);
  });
});
