import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, joinByInvitation, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock, type Clock } from '../../common/clock.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import { secretHash } from '../auth/tokens.ts';
import { smtpSystemMailer } from '../system-mailer.ts';

const DAY = 24 * 3_600_000;

/** The token at the end of an invitation link. */
const tokenOf = (link: string) => link.slice(link.lastIndexOf('/') + 1);

describe.each(testBackends())('workspace invitations (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let wsB: string;
  /** Added to the real time: lets a test step past the seven days without waiting for them. */
  let skew = 0;
  const clock: Clock = { ...systemClock, now: () => Date.now() + skew };

  const invite = (by: Browser, email: string, role: 'owner' | 'admin' | 'member', workspaceId = ws) => by.call('POST', `/api/workspaces/${workspaceId}/invitations`, { email, role });
  const post = (url: string, payload: object, cookie?: string) => h.app.inject({ method: 'POST', url, payload, ...(cookie ? { headers: { cookie } } : {}) });

  beforeAll(async () => {
    h = await apiHarness(backend, { clock, publicUrl: 'https://cadenza.example.test/' });
    const a = await seedWorkspace(h.store, 'Acme', 'owner@example.test');
    ws = a.workspaceId;
    owner = await login(h.app, 'owner@example.test', a.password);
    wsB = (await seedWorkspace(h.store, 'Beta', 'beta-owner@example.test')).workspaceId;
  }, 60_000);
  afterAll(async () => h?.close());

  it('a new person opens the link, sets a name and password, joins with the role, and the link is spent', async () => {
    const r = await invite(owner, 'New.Rep@Example.test', 'member');
    expect(r.statusCode, r.body).toBe(201);
    const body = r.json();
    expect(body).toMatchObject({ emailed: false, mailError: null, invitation: { email: 'New.Rep@Example.test', role: 'member', status: 'pending', invitedBy: 'Acme' } });
    expect(body.link).toMatch(/^https:\/\/cadenza\.example\.test\/invite\/[A-Za-z0-9_-]{43}$/);
    const token = tokenOf(body.link);
    expect(Date.parse(body.invitation.expiresAt) - Date.parse(body.invitation.createdAt)).toBe(7 * DAY);
    // Only the hash is stored; no list answer carries the token.
    const row = await h.store.db.selectFrom('invitation').selectAll().where('id', '=', body.invitation.id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(secretHash(token));
    expect(JSON.stringify(row)).not.toContain(token);
    expect((await owner.call('GET', `/api/workspaces/${ws}/invitations`)).body).not.toContain(token);

    const preview = await post('/api/invitations/lookup', { token });
    expect(preview.json()).toMatchObject({ workspaceName: 'Acme', email: 'New.Rep@Example.test', role: 'member', invitedBy: 'Acme', accountExists: false });

    const weak = await post('/api/invitations/signup', { token, name: 'New Rep', password: 'short' });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().error.details.issues[0].path).toBe('body.password');

    const joined = await post('/api/invitations/signup', { token, name: 'New Rep', password: 'a long new password' });
    expect(joined.statusCode, joined.body).toBe(201);
    expect(joined.json().workspaceId).toBe(ws);
    expect(joined.json().me.workspaces).toEqual([{ id: ws, name: 'Acme', role: 'member', agencyId: null, viaAgency: false }]);
    expect(joined.cookies.find((c) => c.name === SESSION_COOKIE)?.httpOnly).toBe(true);

    // Spent: a second sign-up, an accept by the new member, and a look-up all say so.
    const again = await post('/api/invitations/signup', { token, name: 'Someone', password: 'another long password' });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({ code: 'CONFLICT', details: { reason: 'accepted' } });
    const rep = await login(h.app, 'new.rep@example.test', 'a long new password');
    const accept = await rep.call('POST', '/api/invitations/accept', { token });
    expect(accept.json().error.message).toContain('accepted already');
    expect((await rep.call('GET', `/api/workspaces/${ws}/settings`)).statusCode).toBe(200);
    // The member of A reaches nothing of B.
    expect((await rep.call('GET', `/api/workspaces/${wsB}/settings`)).statusCode).toBe(404);
    const list = (await owner.call('GET', `/api/workspaces/${ws}/invitations`)).json().invitations;
    expect(list.find((i: { id: string }) => i.id === body.invitation.id)).toMatchObject({ status: 'accepted' });
  });

  it('a person with an account signs in and accepts; another signed-in address is refused and the link stays good', async () => {
    const r = await invite(owner, 'beta-owner@example.test', 'admin');
    const token = tokenOf(r.json().link);
    const preview = await post('/api/invitations/lookup', { token });
    expect(preview.json().accountExists).toBe(true);
    const signup = await post('/api/invitations/signup', { token, name: 'Imposter', password: 'a long enough password' });
    expect(signup.statusCode).toBe(409);
    expect(signup.json().error.details.reason).toBe('account_exists');

    const wrong = await owner.call('POST', '/api/invitations/accept', { token });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().error.message).toBe('this invitation is for beta-owner@example.test, and you are signed in as owner@example.test: sign out, then open the link again');

    const beta = await login(h.app, 'beta-owner@example.test', 'a long password 123');
    const noCsrf = await beta.call('POST', '/api/invitations/accept', { token }, { csrf: null });
    expect(noCsrf.statusCode).toBe(403);
    const ok = await beta.call('POST', '/api/invitations/accept', { token });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().me.workspaces).toEqual(
      expect.arrayContaining([
        { id: ws, name: 'Acme', role: 'admin', agencyId: null, viaAgency: false },
        { id: wsB, name: 'Beta', role: 'owner', agencyId: null, viaAgency: false },
      ]),
    );
    // Now an admin of A: lists A's members; still nothing more than before in B's eyes.
    expect((await beta.call('GET', `/api/workspaces/${ws}/members`)).json().members.map((m: { email: string }) => m.email)).toContain('beta-owner@example.test');
    const twice = await beta.call('POST', '/api/invitations/accept', { token });
    expect(twice.statusCode).toBe(409);
    // Inviting a member again is refused.
    const dup = await invite(owner, 'Beta-Owner@example.test', 'member');
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.message).toContain('is a member of this workspace already');
  });

  it('roles: members cannot invite, admins invite at most admins and cannot withdraw an owner invitation', async () => {
    const admin = await joinByInvitation(h.app, owner, ws, 'admin@example.test', 'admin');
    const member = await joinByInvitation(h.app, owner, ws, 'member@example.test', 'member');
    expect((await invite(member, 'x@example.test', 'member')).statusCode).toBe(403);
    expect((await member.call('GET', `/api/workspaces/${ws}/invitations`)).statusCode).toBe(403);
    const tooHigh = await invite(admin, 'x@example.test', 'owner');
    expect(tooHigh.statusCode).toBe(403);
    expect(tooHigh.json().error.message).toBe('an admin cannot invite an owner');
    expect((await invite(admin, 'x@example.test', 'admin')).statusCode).toBe(201);
    const ownerInvite = await invite(owner, 'co-owner@example.test', 'owner');
    expect(ownerInvite.statusCode).toBe(201);
    const id = ownerInvite.json().invitation.id as string;
    expect((await admin.call('DELETE', `/api/workspaces/${ws}/invitations/${id}`)).statusCode).toBe(403);
    // B's owner cannot withdraw A's invitation through B's URL, nor A's.
    const beta = await login(h.app, 'beta-owner@example.test', 'a long password 123');
    expect((await beta.call('DELETE', `/api/workspaces/${wsB}/invitations/${id}`)).statusCode).toBe(404);
    const preview = await post('/api/invitations/lookup', { token: tokenOf(ownerInvite.json().link) });
    expect(preview.json()).toMatchObject({ role: 'owner', accountExists: false });
  });

  it('a withdrawn link and one replaced by a newer invitation are refused, each with its reason', async () => {
    const first = await invite(owner, 'late@example.test', 'member');
    const second = await invite(owner, 'LATE@example.test', 'member');
    const firstToken = tokenOf(first.json().link);
    const replaced = await post('/api/invitations/lookup', { token: firstToken });
    expect(replaced.statusCode).toBe(409);
    expect(replaced.json().error).toMatchObject({ code: 'CONFLICT', message: 'this invitation was withdrawn: ask Acme for a new one', details: { reason: 'revoked' } });
    const id = second.json().invitation.id as string;
    const revoked = await owner.call('DELETE', `/api/workspaces/${ws}/invitations/${id}`);
    expect(revoked.json().status).toBe('revoked');
    const signup = await post('/api/invitations/signup', { token: tokenOf(second.json().link), name: 'Late', password: 'a long enough password' });
    expect(signup.statusCode).toBe(409);
    expect(signup.json().error.details.reason).toBe('revoked');
    expect(await h.store.db.selectFrom('account').select('id').where('email', '=', 'late@example.test').executeTakeFirst()).toBeUndefined();
    const unknown = await post('/api/invitations/lookup', { token: 'A'.repeat(43) });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toContain('not valid');
  });

  it('a link expires after seven days', async () => {
    const r = await invite(owner, 'slow@example.test', 'member');
    const token = tokenOf(r.json().link);
    skew = 7 * DAY - 60_000;
    expect((await post('/api/invitations/lookup', { token })).statusCode).toBe(200);
    skew = 7 * DAY + 1;
    try {
      const late = await post('/api/invitations/signup', { token, name: 'Slow', password: 'a long enough password' });
      expect(late.statusCode).toBe(409);
      expect(late.json().error).toMatchObject({ details: { reason: 'expired' } });
      expect(late.json().error.message).toMatch(/^this invitation expired on \d{4}-\d{2}-\d{2}: ask Acme for a new one$/);
      const list = (await owner.call('GET', `/api/workspaces/${ws}/invitations`)).json().invitations;
      expect(list.find((i: { email: string }) => i.email === 'slow@example.test').status).toBe('expired');
    } finally {
      skew = 0;
    }
  });

  it('with a mailer that cannot send, the invitation stands and the link comes back with the reason', async () => {
    // Port 9 on loopback (discard) is closed here: the connection is refused at once.
    const mailer = smtpSystemMailer({ url: 'smtp://nobody:secret@127.0.0.1:9', from: 'cadenza@example.test' });
    const h2 = await apiHarness(backend, { mailer });
    try {
      const w = await seedWorkspace(h2.store, 'Gamma', 'g@example.test');
      const g = await login(h2.app, 'g@example.test', w.password);
      const r = await g.call('POST', `/api/workspaces/${w.workspaceId}/invitations`, { email: 'z@example.test', role: 'member' });
      expect(r.statusCode).toBe(201);
      expect(r.json()).toMatchObject({ emailed: false, invitation: { status: 'pending' } });
      expect(r.json().link).toMatch(/\/invite\/[A-Za-z0-9_-]{43}$/);
      expect(r.json().mailError).toMatch(/ECONNREFUSED|connect/i);
    } finally {
      await h2.close();
    }
  });
});

describe('invitation token guessing is limited per IP (in memory, so one backend)', () => {
  it('look-up, accept and sign-up each answer 429 past the sign-in limit from one address; another address still gets through', async () => {
    const h = await apiHarness('pglite', { loginLimit: { perEmail: 3, perIp: 4, windowMs: 60_000 } });
    try {
      const a = await seedWorkspace(h.store, 'Acme', 'owner@limit.test');
      const owner = await login(h.app, 'owner@limit.test', a.password);
      const link = (await owner.call('POST', `/api/workspaces/${a.workspaceId}/invitations`, { email: 'rep@limit.test', role: 'member' })).json().link as string;
      const token = tokenOf(link);
      const guess = (i: number) => `guess-${String(i).padStart(37, '0')}`;
      const send = (url: string, payload: object, ip: string, who?: Browser) =>
        h.app.inject({ method: 'POST', url, payload, remoteAddress: ip, ...(who ? { headers: { cookie: who.cookie, 'x-csrf-token': who.csrf } } : {}) });

      for (let i = 0; i < 4; i++) expect((await send('/api/invitations/lookup', { token: guess(i) }, '10.0.0.1')).statusCode).not.toBe(429);
      // Past the limit even the right token is refused from that address, with the usual error shape.
      const limited = await send('/api/invitations/lookup', { token }, '10.0.0.1');
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error.code).toBe('RATE_LIMITED');
      const other = await send('/api/invitations/lookup', { token }, '10.0.0.2');
      expect(other.statusCode, other.body).toBe(200);

      // A signed-in account trying tokens at accept meets the same limit.
      for (let i = 0; i < 4; i++) expect((await send('/api/invitations/accept', { token: guess(i) }, '10.0.0.3', owner)).statusCode).not.toBe(429);
      expect((await send('/api/invitations/accept', { token: guess(9) }, '10.0.0.3', owner)).statusCode).toBe(429);

      for (let i = 0; i < 4; i++) expect((await send('/api/invitations/signup', { token: guess(i), name: 'X', password: 'a long enough password' }, '10.0.0.4')).statusCode).not.toBe(429);
      expect((await send('/api/invitations/signup', { token, name: 'Rep', password: 'a long enough password' }, '10.0.0.4')).statusCode).toBe(429);
      const joined = await send('/api/invitations/signup', { token, name: 'Rep', password: 'a long enough password' }, '10.0.0.5');
      expect(joined.statusCode, joined.body).toBe(201);
    } finally {
      await h.close();
    }
  });
});
