import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, joinByInvitation, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { smtpSink } from '../../../test/mail/smtp-sink.ts';
import { testBackends } from '../../../test/stores.ts';
import { smtpSystemMailer } from '../system-mailer.ts';

const tokenOf = (link: string) => link.slice(link.lastIndexOf('/') + 1);

describe.each(testBackends())('members: joining, leaving and what a member leaves behind (%s)', (backend) => {
  let h: ApiHarness;
  /** The attacker's own workspace, and its owner. */
  let evil: string;
  let mallory: Browser;
  /** The victim's workspace and the victim, who already has an account. */
  let good: string;
  let victim: Browser;
  let victimPassword: string;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const e = await seedWorkspace(h.store, 'Evil', 'mallory@example.test');
    evil = e.workspaceId;
    mallory = await login(h.app, 'mallory@example.test', e.password);
    const g = await seedWorkspace(h.store, 'Good', 'victim@example.test', 'the victim password 1');
    good = g.workspaceId;
    victimPassword = g.password;
    victim = await login(h.app, 'victim@example.test', victimPassword);
  }, 60_000);
  afterAll(async () => h?.close());

  const memberEmails = async (by: Browser, ws: string) => ((await by.call('GET', `/api/workspaces/${ws}/members`)).json().members as { email: string }[]).map((m) => m.email);

  it('adding an existing account from elsewhere links nothing: it is an invitation its holder must accept', async () => {
    const r = await mallory.call('POST', `/api/workspaces/${evil}/members`, { email: 'Victim@example.test', role: 'owner' });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ invitation: { email: 'Victim@example.test', role: 'owner', status: 'pending' }, emailed: false });
    // Not a member until the victim accepts, signed in as themselves.
    expect(await memberEmails(mallory, evil)).not.toContain('victim@example.test');
    expect((await victim.call('GET', '/api/auth/me')).json().workspaces.map((w: { name: string }) => w.name)).toEqual(['Good']);
    // The link in the wrong hands is no account: Mallory signed in cannot accept it for herself,
    // and nobody can sign up a second account for the address.
    const token = tokenOf(r.json().link);
    expect((await mallory.call('POST', '/api/invitations/accept', { token })).json().error.details.reason).toBe('other_account');
    const signup = await h.app.inject({ method: 'POST', url: '/api/invitations/signup', payload: { token, name: 'x', password: 'mallory knows this' } });
    expect(signup.statusCode).toBe(409);
    // Accepting, the victim joins; their password is still theirs alone.
    expect((await victim.call('POST', '/api/invitations/accept', { token })).statusCode).toBe(200);
    expect(await memberEmails(mallory, evil)).toContain('victim@example.test');
    await login(h.app, 'victim@example.test', victimPassword);
  });

  it('an initial password is refused, so no one pre-registers an address they do not hold', async () => {
    const r = await mallory.call('POST', `/api/workspaces/${evil}/members`, { email: 'later@example.test', role: 'member', initialPassword: 'mallory knows this one' });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.details.field).toBe('initialPassword');
    expect(await h.store.db.selectFrom('account').select('id').where('email', '=', 'later@example.test').executeTakeFirst()).toBeUndefined();
    await expect(login(h.app, 'later@example.test', 'mallory knows this one')).rejects.toThrow(/401/);
  });

  it('the answer has the same shape whether or not the address has an account', async () => {
    const shape = (v: unknown): unknown =>
      v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)])) : v === null ? 'null' : typeof v;
    const known = await mallory.call('POST', `/api/workspaces/${evil}/members`, { email: 'good-owner-2@example.test', role: 'member' });
    await seedWorkspace(h.store, 'Other', 'has-account@example.test');
    const existing = await mallory.call('POST', `/api/workspaces/${evil}/members`, { email: 'has-account@example.test', role: 'member' });
    expect(known.statusCode).toBe(existing.statusCode);
    expect(shape(existing.json())).toEqual(shape(known.json()));
    expect(Object.keys(existing.json()).sort()).toEqual(['emailed', 'invitation', 'link', 'mailError']);
  });

  it('removing an admin revokes the API keys they created and withdraws their pending invitations', async () => {
    const admin = await joinByInvitation(h.app, victim, good, 'admin-leaving@example.test', 'admin');
    const made = await admin.call('POST', `/api/workspaces/${good}/api-keys`, { name: 'their script' });
    expect(made.statusCode).toBe(201);
    const key = made.json().key as string;
    const bearer = { authorization: `Bearer ${key}` };
    expect((await h.app.inject({ method: 'GET', url: `/api/workspaces/${good}/settings`, headers: bearer })).statusCode).toBe(200);
    const inv = await admin.call('POST', `/api/workspaces/${good}/invitations`, { email: 'their-friend@example.test', role: 'admin' });
    // The list says who made the key and when it was last used.
    const listed = (await victim.call('GET', `/api/workspaces/${good}/api-keys`)).json().apiKeys.find((k: { id: string }) => k.id === made.json().id);
    expect(listed).toMatchObject({ createdBy: 'admin-leaving@example.test', createdById: expect.any(String), lastUsedAt: expect.any(String) });

    const adminId = ((await victim.call('GET', `/api/workspaces/${good}/members`)).json().members as { id: string; email: string }[]).find((m) => m.email === 'admin-leaving@example.test')!.id;
    const removed = await victim.call('DELETE', `/api/workspaces/${good}/members/${adminId}`);
    expect(removed.json()).toEqual({ ok: true, apiKeysRevoked: 1, invitationsRevoked: 1 });
    expect((await h.app.inject({ method: 'GET', url: `/api/workspaces/${good}/settings`, headers: bearer })).statusCode).toBe(401);
    const lookup = await h.app.inject({ method: 'POST', url: '/api/invitations/lookup', payload: { token: tokenOf(inv.json().link) } });
    expect(lookup.json().error.details.reason).toBe('revoked');
    // The creator's address stays on the revoked key after they left.
    const after = (await victim.call('GET', `/api/workspaces/${good}/api-keys`)).json().apiKeys.find((k: { id: string }) => k.id === made.json().id);
    expect(after).toMatchObject({ createdBy: 'admin-leaving@example.test', createdById: null, revokedAt: expect.any(String) });
  });

  it('demoting an admin to member caps their keys at member and withdraws their pending invitations', async () => {
    const admin = await joinByInvitation(h.app, victim, good, 'admin-demoted@example.test', 'admin');
    const key = (await admin.call('POST', `/api/workspaces/${good}/api-keys`, { name: 'admin script' })).json().key as string;
    const bearer = { authorization: `Bearer ${key}` };
    const inv = await admin.call('POST', `/api/workspaces/${good}/invitations`, { email: 'their-member@example.test', role: 'member' });
    const adminId = ((await victim.call('GET', `/api/workspaces/${good}/members`)).json().members as { id: string; email: string }[]).find((m) => m.email === 'admin-demoted@example.test')!.id;
    expect((await victim.call('PATCH', `/api/workspaces/${good}/members/${adminId}`, { role: 'member' })).statusCode).toBe(200);
    // Still a key, now a member's: reads what a member reads, no admin route.
    expect((await h.app.inject({ method: 'GET', url: `/api/workspaces/${good}/settings`, headers: bearer })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: `/api/workspaces/${good}/api-keys`, headers: bearer })).statusCode).toBe(403);
    const lookup = await h.app.inject({ method: 'POST', url: '/api/invitations/lookup', payload: { token: tokenOf(inv.json().link) } });
    expect(lookup.json().error.details.reason).toBe('revoked');
  });

  it("an admin gives a member their trunk number (caller ID and DID): stored as E.164, audited, unique across workspaces, refused with the reason when it is no number, cleared with null; a member cannot set it", async () => {
    const rep = await joinByInvitation(h.app, victim, good, 'rep-with-phone@example.test', 'member');
    const members = async (ws: string, by: Browser) => (await by.call('GET', `/api/workspaces/${ws}/members`)).json().members as { id: string; email: string; phoneNumber: string | null }[];
    const repId = (await members(good, victim)).find((m) => m.email === 'rep-with-phone@example.test')!.id;
    expect((await members(good, victim)).find((m) => m.id === repId)!.phoneNumber).toBeNull();

    const set = await victim.call('PATCH', `/api/workspaces/${good}/members/${repId}`, { phoneNumber: '+44 20 7946 0123' });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().phoneNumber).toBe('+442079460123');
    const audited = (await victim.call('GET', `/api/workspaces/${good}/audit-log?action=member.phone_number_changed`)).json();
    expect(JSON.stringify(audited)).toContain('+442079460123');

    // A number rings one person: another workspace's member cannot take it.
    const malloryId = (await members(evil, mallory))[0]!.id;
    const taken = await mallory.call('PATCH', `/api/workspaces/${evil}/members/${malloryId}`, { phoneNumber: '+442079460123' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().error.message).toMatch(/already the number of another member/);

    const bad = await victim.call('PATCH', `/api/workspaces/${good}/members/${repId}`, { phoneNumber: '020 7946 0123' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/international form/);
    expect((await rep.call('PATCH', `/api/workspaces/${good}/members/${repId}`, { phoneNumber: '+442079460124' })).statusCode).toBe(403);

    expect((await victim.call('PATCH', `/api/workspaces/${good}/members/${repId}`, { phoneNumber: null })).json().phoneNumber).toBeNull();
    expect((await mallory.call('PATCH', `/api/workspaces/${evil}/members/${malloryId}`, { phoneNumber: '+442079460123' })).statusCode).toBe(200);
  });
});

describe.each(testBackends())('members added with a system mailer: the link goes to the address, not to the admin (%s)', (backend) => {
  let h: ApiHarness;
  let sink: Awaited<ReturnType<typeof smtpSink>>;
  let owner: Browser;
  let ws: string;
  /** What the in-process SMTP server received, by recipient. */
  const received = new Map<string, string>();

  beforeAll(async () => {
    sink = await smtpSink((m) => {
      for (const rcpt of m.to) received.set(rcpt.toLowerCase(), m.raw);
      return null;
    });
    h = await apiHarness(backend, { mailer: smtpSystemMailer({ url: sink.url, from: 'cadenza@example.test' }), publicUrl: 'https://cadenza.example.test' });
    const a = await seedWorkspace(h.store, 'Acme', 'owner@example.test');
    ws = a.workspaceId;
    owner = await login(h.app, 'owner@example.test', a.password);
    await seedWorkspace(h.store, 'Elsewhere', 'has-account@example.test');
  }, 60_000);
  afterAll(async () => {
    h.ctx.mailer?.close();
    await h?.close();
    await sink.close();
  });

  it('a new address verifies itself by the emailed link; an existing account gets the same answer and mail', async () => {
    const fresh = await owner.call('POST', `/api/workspaces/${ws}/members`, { email: 'new-rep@example.test', role: 'member' });
    const existing = await owner.call('POST', `/api/workspaces/${ws}/members`, { email: 'has-account@example.test', role: 'member' });
    // Emailed both times; the admin never holds a link to open as someone else.
    for (const r of [fresh, existing]) expect(r.json()).toMatchObject({ emailed: true, link: null, mailError: null });
    const linkIn = (mail: string) => /https:\/\/cadenza\.example\.test\/invite\/([A-Za-z0-9_-]{43})/.exec(mail.replace(/=\r?\n/g, ''))?.[1];
    const token = linkIn(received.get('new-rep@example.test') ?? '');
    expect(token).toBeDefined();
    expect(linkIn(received.get('has-account@example.test') ?? '')).toBeDefined();
    // Only whoever reads that mailbox can make the account.
    const joined = await h.app.inject({ method: 'POST', url: '/api/invitations/signup', payload: { token, name: 'New Rep', password: 'their own password' } });
    expect(joined.statusCode).toBe(201);
    await login(h.app, 'new-rep@example.test', 'their own password');
  });
});
