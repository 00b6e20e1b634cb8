import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, ownerFixture, seedWorkspace, type ApiHarness, type Browser, type OwnerFixture } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { holds, Leases } from '../../ops/leases.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { validateDefinition } from '../../sequence/definition.ts';
import { addMembership } from '../auth/accounts.ts';
import { hashPassword } from '../auth/passwords.ts';

describe.each(testBackends())('removing a mailbox (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let rep: Browser;
  const random = seededRandom(`removal-${backend}`);
  const id = () => newId(systemClock.now(), random);
  const mb = { gone: '', other: '', reps: '' };
  /** e.fresh: not sent yet; e.queued: its first email queued on the mailbox; e.threaded: its first email sent; e.ooo: paused until a date; e.alone: its sequence has no other mailbox. */
  const e = { fresh: '', queued: '', threaded: '', ooo: '', alone: '' };
  let queuedRequest = '';
  let flying = '';

  const db = () => h.store.db;
  const url = (mailboxId: string, q = '') => `/api/workspaces/${ws}/mailboxes/${mailboxId}${q}`;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'A', 'owner@example.test');
    ws = w.workspaceId;
    owner = await login(h.app, 'owner@example.test', w.password);
    const accountId = id();
    await db().insertInto('account').values({ id: accountId, email: 'rep@example.test', name: 'rep', password_hash: await hashPassword('member password 1') }).execute();
    const repUser = await addMembership(db(), { clock: systemClock, random }, { accountId, workspaceId: ws, email: 'rep@example.test', name: 'rep', role: 'member' });
    rep = await login(h.app, 'rep@example.test', 'member password 1');

    for (const [k, email, user] of [['gone', 'leaving@example.test', w.userId], ['other', 'staying@example.test', w.userId], ['reps', 'rep@example.test', repUser]] as const) {
      mb[k] = id();
      await db().insertInto('mailbox').values({ id: mb[k], workspace_id: ws, user_id: user, email, provider: 'smtp_imap' }).execute();
    }
    await h.ctx.vault!.put(ws, mb.gone, { kind: 'password', username: 'leaving@example.test', password: 'secret' });

    const steps = [
      { key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'Hello' },
      { key: 'follow', type: 'email', delay: '2 days', subject: 'Re: Hi', body: 'Again' },
    ];
    const deps = { clock: systemClock, random };
    const pooled = await applyDefinition(h.store, deps, ws, validateDefinition({ key: 'pooled', name: 'Pooled', window: 'any', holidays: false, jitter_minutes: 0, mailboxes: ['leaving@example.test', 'staying@example.test'], steps }));
    const single = await applyDefinition(h.store, deps, ws, validateDefinition({ key: 'single', name: 'Single', window: 'any', holidays: false, jitter_minutes: 0, mailboxes: ['leaving@example.test'], steps }));
    const lead = async (tag: string) => {
      const leadId = id();
      await db().insertInto('lead').values({ id: leadId, workspace_id: ws, email: `${tag}@prospects.test`, email_norm: `${tag}@prospects.test` }).execute();
      return leadId;
    };
    const leads: Record<keyof typeof e, string> = { fresh: await lead('fresh'), queued: await lead('queued'), threaded: await lead('threaded'), ooo: await lead('ooo'), alone: await lead('alone') };
    await bulkEnroll(h.store, deps, { workspaceId: ws, sequenceId: pooled.sequenceId, leadIds: [leads.fresh, leads.queued, leads.threaded, leads.ooo] });
    await bulkEnroll(h.store, deps, { workspaceId: ws, sequenceId: single.sequenceId, leadIds: [leads.alone] });
    for (const k of Object.keys(e) as Array<keyof typeof e>) {
      e[k] = (await db().selectFrom('enrollment').select('id').where('lead_id', '=', leads[k]).executeTakeFirstOrThrow()).id;
    }
    // Rotation spread them; the states under test are set here, all on the mailbox to remove.
    await db().updateTable('enrollment').set({ mailbox_id: mb.gone }).where('workspace_id', '=', ws).execute();
    const step = async (seq: string, key: string) => (await db().selectFrom('step').select('id').where('sequence_id', '=', seq).where('key', '=', key).executeTakeFirstOrThrow()).id;
    const intro = await step(pooled.sequenceId, 'intro');
    const follow = await step(pooled.sequenceId, 'follow');
    const request = async (enrollmentId: string, stepId: string, state: 'queued' | 'sent' | 'in_flight') => {
      const rid = id();
      await db().insertInto('send_request').values({ id: rid, workspace_id: ws, enrollment_id: enrollmentId, step_id: stepId, mailbox_id: mb.gone, state, due_at: new Date(), message_id: state === 'queued' ? null : `<${rid}@example.test>` }).execute();
      return rid;
    };
    queuedRequest = await request(e.queued, intro, 'queued');
    await db().updateTable('enrollment').set({ waiting_for: 'send', next_step_id: intro, due_at: null }).where('id', '=', e.queued).execute();
    await request(e.threaded, intro, 'sent');
    flying = await request(e.threaded, follow, 'in_flight');
    await db().updateTable('enrollment').set({ state: 'paused', state_reason: 'out of office', due_at: new Date(Date.now() + 7 * 86_400_000) }).where('id', '=', e.ooo).execute();
    const leases = new Leases(h.store, systemClock);
    await leases.acquire(`mailbox:${mb.gone}`, 'a sender', 60_000);
    await leases.acquire(`sync:${mb.gone}`, 'a syncer', 60_000);
    await db()
      .insertInto('message')
      .values({ id: id(), workspace_id: ws, mailbox_id: mb.gone, enrollment_id: e.threaded, direction: 'inbound', message_id: '<reply@prospects.test>', subject: 'Re: Hi', from_addr: 'threaded@prospects.test', at: new Date(), folder: 'inbox', label: 'human_reply' })
      .execute();
  }, 60_000);
  afterAll(async () => h?.close());

  it("a member may not remove a colleague's mailbox", async () => {
    const r = await rep.call('DELETE', url(mb.gone, '?dryRun=true'));
    expect(r.statusCode).toBe(403);
  });

  it('a dry run says what would happen and changes nothing', async () => {
    const r = await owner.call('DELETE', url(mb.gone, '?dryRun=true'));
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ dryRun: true, reassigned: 3, paused: 2, inFlightSends: 1, credentialErased: true, revocation: 'none' });
    expect(body.reassignedTo).toEqual([{ mailboxId: mb.other, email: 'staying@example.test', enrollments: 3 }]);
    const reasons = Object.fromEntries(body.pausedEnrollments.map((p: { enrollmentId: string; reason: string }) => [p.enrollmentId, p.reason]));
    expect(reasons[e.threaded]).toMatch(/^mailbox removed \(leaving@example.test\): its next email would continue a thread from another address/);
    expect(reasons[e.alone]).toMatch(/^mailbox removed \(leaving@example.test\): no other mailbox of the sequence can send/);
    // Nothing moved: the mailbox is listed, its leases and credential are there.
    const list = await owner.call('GET', `/api/workspaces/${ws}/mailboxes`);
    expect(list.json().mailboxes.map((m: { id: string }) => m.id)).toContain(mb.gone);
    expect(await h.ctx.vault!.get(mb.gone)).toBeDefined();
    expect(await db().selectFrom('lease').select('resource').where('resource', 'like', `%${mb.gone}`).execute()).toHaveLength(2);
    expect((await db().selectFrom('enrollment').select('mailbox_id').where('id', '=', e.fresh).executeTakeFirstOrThrow()).mailbox_id).toBe(mb.gone);
  });

  it('a send in flight must settle first: 409, and nothing changed', async () => {
    const r = await owner.call('DELETE', url(mb.gone));
    expect(r.statusCode).toBe(409);
    expect(r.json().error).toMatchObject({ code: 'CONFLICT', details: { inFlight: 1 } });
    expect(await db().selectFrom('lease').select('resource').where('resource', 'like', `%${mb.gone}`).execute()).toHaveLength(2);
  });

  it('removes: no lease, no credential, out of the pools; fresh enrollments move, threaded ones pause; history stays', async () => {
    await db().updateTable('send_request').set({ state: 'sent' }).where('id', '=', flying).execute();
    const r = await owner.call('DELETE', url(mb.gone));
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ dryRun: false, reassigned: 3, paused: 2, inFlightSends: 0, credentialErased: true });

    const row = await db().selectFrom('mailbox').select(['removed_at', 'removed_by', 'health', 'health_reason']).where('id', '=', mb.gone).executeTakeFirstOrThrow();
    expect(row.removed_at).not.toBeNull();
    expect(row).toMatchObject({ health: 'paused', health_reason: 'removed' });
    expect(await h.ctx.vault!.get(mb.gone)).toBeUndefined();
    expect(await db().selectFrom('lease').select('resource').where('resource', 'like', `%${mb.gone}`).execute()).toEqual([]);
    expect(await db().selectFrom('sequence_mailbox').select('sequence_id').where('mailbox_id', '=', mb.gone).execute()).toEqual([]);

    const enr = async (k: keyof typeof e) => db().selectFrom('enrollment').select(['mailbox_id', 'state', 'state_reason', 'due_at']).where('id', '=', e[k]).executeTakeFirstOrThrow();
    for (const k of ['fresh', 'queued', 'ooo'] as const) expect((await enr(k)).mailbox_id).toBe(mb.other);
    expect(await enr('ooo')).toMatchObject({ state: 'paused', state_reason: 'out of office' });
    // The queued request went with its enrollment and waits to be planned on the new mailbox.
    expect(await db().selectFrom('send_request').select(['mailbox_id', 'state', 'send_at', 'planned_at']).where('id', '=', queuedRequest).executeTakeFirstOrThrow()).toEqual({
      mailbox_id: mb.other, state: 'queued', send_at: null, planned_at: null,
    });
    const threaded = await enr('threaded');
    expect(threaded).toMatchObject({ mailbox_id: mb.gone, state: 'paused' });
    expect(threaded.state_reason).toMatch(/^mailbox removed/);
    const alone = await enr('alone');
    expect(alone).toMatchObject({ state: 'paused', due_at: null });
    expect(await db().selectFrom('send_request').select('id').where('mailbox_id', '=', mb.gone).where('state', '=', 'queued').execute()).toEqual([]);
    // History: what it sent stays, and it is no longer a mailbox of the workspace.
    expect(await db().selectFrom('send_request').select('id').where('mailbox_id', '=', mb.gone).where('state', '=', 'sent').execute()).toHaveLength(2);
    const list = await owner.call('GET', `/api/workspaces/${ws}/mailboxes`);
    expect(list.json().mailboxes.map((m: { id: string }) => m.id)).not.toContain(mb.gone);
    const inbox = await owner.call('GET', `/api/workspaces/${ws}/inbox`);
    expect(inbox.json().items.find((m: { mailboxId: string }) => m.mailboxId === mb.gone)).toMatchObject({ mailboxEmail: 'leaving@example.test (removed mailbox)' });
    // Answering that reply would go out through the removed mailbox: refused, before any connection.
    const inboundId = inbox.json().items.find((m: { mailboxId: string }) => m.mailboxId === mb.gone).id;
    const answer = await owner.call('POST', `/api/workspaces/${ws}/inbox/messages/${inboundId}/reply`, { text: 'Thanks!' });
    expect(answer.statusCode).toBe(409);
    expect(answer.json().error.message).toMatch(/leaving@example.test\) was removed/);
  });

  it("resuming a 'mailbox removed' enrollment goes on from another mailbox of its sequence; with none it is refused", async () => {
    const resume = (k: keyof typeof e) => owner.call('POST', `/api/workspaces/${ws}/enrollments/${e[k]}/resume`);
    const r = await resume('threaded');
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ state: 'active', mailboxId: mb.other });
    const refused = await resume('alone');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.message).toMatch(/leaving@example.test was removed and its sequence has no other mailbox/);
    expect((await db().selectFrom('enrollment').select(['state', 'mailbox_id']).where('id', '=', e.alone).executeTakeFirstOrThrow())).toEqual({ state: 'paused', mailbox_id: mb.gone });
  });

  it('a removed mailbox cannot be removed, resumed or changed again; its address can be connected again', async () => {
    expect((await owner.call('DELETE', url(mb.gone))).statusCode).toBe(404);
    expect((await owner.call('POST', url(mb.gone, '/resume'))).statusCode).toBe(404);
    expect((await owner.call('PATCH', url(mb.gone), { dailyCap: 3 })).statusCode).toBe(404);
    const again = await owner.call('POST', `/api/workspaces/${ws}/mailboxes`, {
      email: 'leaving@example.test',
      password: 'new password',
      smtp: { host: 'smtp.example.test', port: 587, security: 'starttls' },
      imap: { host: 'imap.example.test', port: 993, security: 'tls' },
      verify: false,
    });
    expect(again.statusCode).toBe(201);
    expect(again.json().id).not.toBe(mb.gone);
  });

  it('enrollments=pause pauses every enrollment of the mailbox', async () => {
    await db().updateTable('enrollment').set({ mailbox_id: mb.reps }).where('id', '=', e.fresh).execute();
    const r = await rep.call('DELETE', url(mb.reps, '?enrollments=pause'));
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ reassigned: 0, paused: 1, pausedEnrollments: [{ enrollmentId: e.fresh, reason: 'mailbox removed (rep@example.test)' }] });
  });
});

describe('removing a mailbox while its sender is claiming (postgres)', () => {
  let f: OwnerFixture;
  beforeAll(async () => {
    f = await ownerFixture('postgres');
  }, 60_000);
  afterAll(async () => f?.h.close());

  it('waits for the claim that holds the lease to commit, then refuses with 409 because the send is in flight', async () => {
    const db = f.h.store.db;
    const lease = (await new Leases(f.h.store, systemClock).acquire(`mailbox:${f.g.mailboxId}`, 'a sender', 60_000))!;
    const rid = newId(Date.now(), seededRandom('claim'));
    await db.insertInto('send_request').values({ id: rid, workspace_id: f.ws, enrollment_id: f.g.enrollmentId!, step_id: f.g.stepId!, mailbox_id: f.g.mailboxId!, due_at: new Date() }).execute();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let inClaim!: () => void;
    const claiming = new Promise<void>((r) => (inClaim = r));
    // What claimNext does (outbox.ts): the fencing check holds the lease FOR SHARE until the claim commits.
    const claim = db.transaction().execute(async (tx) => {
      expect(await holds(tx, lease.resource, lease.token, Date.now())).toBe(true);
      await tx.updateTable('send_request').set({ state: 'in_flight', message_id: '<claimed@example.test>' }).where('id', '=', rid).execute();
      inClaim();
      await gate;
    });
    await claiming;
    let settled = false;
    const removal = f.owner.call('DELETE', `/api/workspaces/${f.ws}/mailboxes/${f.g.mailboxId}`).then((r) => ((settled = true), r));
    await new Promise((r) => setTimeout(r, 500));
    expect(settled).toBe(false);
    release();
    await claim;
    const r = await removal;
    expect(r.statusCode).toBe(409);
    expect(r.json().error.details).toMatchObject({ inFlight: 1 });
    // Refused as a whole: the lease is still the sender's, the mailbox is not removed.
    expect(await db.selectFrom('lease').select('owner').where('resource', '=', lease.resource).executeTakeFirstOrThrow()).toEqual({ owner: 'a sender' });
    expect((await db.selectFrom('mailbox').select('removed_at').where('id', '=', f.g.mailboxId!).executeTakeFirstOrThrow()).removed_at).toBeNull();
  });
});
