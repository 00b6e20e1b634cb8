import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, ownerFixture, seedGraph, seedWorkspace, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { claimNext, lastLook, recordSent, type OutboxDeps } from '../../sending/outbox.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { validateDefinition } from '../../sequence/definition.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';

type Enr = { id: string; sequenceId: string; state: string; stateReason: string | null; movedTo: string | null; mailboxId: string | null; nextStepKey: string | null; leadId: string };

describe.each(testBackends())('moving enrollments (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let g: ObjectIds;
  let service: EnrollmentService;
  let outbox: OutboxDeps;
  const random = seededRandom(`move-${backend}`);
  const id = () => newId(Date.now(), random);
  let n = 0;

  /** A sequence of the workspace: an email now, then a call; sent from the given mailboxes. */
  async function sequence(name: string, opts: { mailboxes?: string[]; status?: 'active' | 'draft'; workspaceId?: string } = {}): Promise<string> {
    const def = validateDefinition({
      key: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
      name,
      status: opts.status ?? 'active',
      window: 'any',
      holidays: false,
      jitter_minutes: 0,
      mailboxes: opts.mailboxes ?? ['rep-a@example.test'],
      steps: [
        { key: 'hello', type: 'email', delay: '0 minutes', subject: 'Hello', body: 'Hi {{first_name}}' },
        { key: 'ring', type: 'call', delay: '2 days', title: 'Call' },
        { key: 'bump', type: 'email', delay: '3 days', subject: '', body: 'Bump' },
      ],
    });
    return (await applyDefinition(h.store, { clock: systemClock, random }, opts.workspaceId ?? ws, def)).sequenceId;
  }

  /** A new lead enrolled in `sequenceId`; returns its enrollment id. */
  async function enrolled(sequenceId: string): Promise<{ leadId: string; enrollmentId: string; email: string }> {
    const leadId = id();
    const email = `move-${backend}-${++n}@prospects.test`;
    await h.store.db.insertInto('lead').values({ id: leadId, workspace_id: ws, email, email_norm: email, first_name: `Lead ${n}` }).execute();
    await bulkEnroll(h.store, { clock: systemClock, random }, { workspaceId: ws, sequenceId, leadIds: [leadId] });
    const e = await h.store.db.selectFrom('enrollment').select('id').where('lead_id', '=', leadId).executeTakeFirstOrThrow();
    return { leadId, enrollmentId: e.id, email };
  }

  const get = async (enrollmentId: string) => (await owner.call('GET', `/api/workspaces/${ws}/enrollments/${enrollmentId}`)).json<Enr>();
  const move = (enrollmentId: string, body: Record<string, unknown>) => owner.call('POST', `/api/workspaces/${ws}/enrollments/${enrollmentId}/move`, body);
  const requests = (enrollmentId: string) => h.store.db.selectFrom('send_request').select(['id', 'state', 'last_error']).where('enrollment_id', '=', enrollmentId).execute();
  const live = (leadId: string) => h.store.db.selectFrom('enrollment').select(['id', 'sequence_id']).where('lead_id', '=', leadId).where('state', 'in', ['active', 'paused']).execute();

  let s1: string;
  let s2: string;

  beforeAll(async () => {
    ({ h, ws, owner, g } = await ownerFixture(backend));
    service = new EnrollmentService({ store: h.store, clock: systemClock, random });
    outbox = { store: h.store, service, clock: systemClock, random };
    s1 = await sequence('First touch');
    s2 = await sequence('Nurture');
  }, 60_000);
  afterAll(async () => h?.close());

  it("ends the old enrollment as 'moved' and enrolls the lead in the target, keeping the mailbox; the timeline says so", async () => {
    // The fixture's enrollment: waiting for its first step (a call), with an open call task.
    const r = await move(g.enrollmentId!, { sequenceId: s2 });
    expect(r.statusCode, r.body).toBe(200);
    const { from, to } = r.json<{ from: Enr; to: Enr }>();
    expect(from).toMatchObject({ id: g.enrollmentId, state: 'moved', stateReason: 'moved to Nurture', movedTo: to.id });
    expect(to).toMatchObject({ sequenceId: s2, leadId: g.leadId, state: 'active', nextStepKey: 'hello', mailboxId: g.mailboxId, movedTo: null });
    expect(await get(g.enrollmentId!)).toMatchObject({ state: 'moved', movedTo: to.id });
    const task = await h.store.db.selectFrom('task').select('state').where('id', '=', g.taskId!).executeTakeFirstOrThrow();
    expect(task.state).toBe('cancelled');
    const page = (await owner.call('GET', `/api/workspaces/${ws}/leads/${g.leadId}`)).json<{ enrollments: Array<{ state: string }>; timeline: Array<{ what: string; detail: string | null }> }>();
    expect(page.enrollments.map((e) => e.state).sort()).toEqual(['active', 'moved']);
    expect(page.timeline).toContainEqual(expect.objectContaining({ what: 'move', detail: 'moved from Sequence a to Nurture' }));
    expect(page.timeline).toContainEqual(expect.objectContaining({ what: 'enrolled', detail: 'moved from Sequence a to Nurture' }));
  });

  it('cancels a queued send of the old enrollment; the sender never claims it', async () => {
    const e = await enrolled(s1);
    await service.fireDue(100);
    expect((await requests(e.enrollmentId)).map((r) => r.state)).toEqual(['queued']);
    expect((await move(e.enrollmentId, { sequenceId: s2 })).statusCode).toBe(200);
    expect((await requests(e.enrollmentId)).map((r) => r.state)).toEqual(['cancelled']);
    // What the mailbox's queue hands out now is never the old enrollment's step.
    for (let c = await claimNext(outbox, g.mailboxId!); c.kind !== 'empty'; c = await claimNext(outbox, g.mailboxId!)) {
      expect(c.kind === 'claimed' ? c.claim.enrollmentId : c.kind === 'refused' ? c.enrollmentId : '').not.toBe(e.enrollmentId);
      if (c.kind === 'claimed') await recordSent(outbox, c.claim, Date.now());
    }
  });

  it('a send in flight when the move commits goes at most once: refused at the last look, or recorded on the old enrollment', async () => {
    const a = await enrolled(s1);
    const b = await enrolled(s1);
    await service.fireDue(100);
    const claims = [];
    for (let c = await claimNext(outbox, g.mailboxId!); c.kind !== 'empty'; c = await claimNext(outbox, g.mailboxId!)) if (c.kind === 'claimed') claims.push(c.claim);
    const ca = claims.find((c) => c.enrollmentId === a.enrollmentId)!;
    const cb = claims.find((c) => c.enrollmentId === b.enrollmentId)!;
    expect(ca && cb).toBeTruthy();
    // a: moved between the claim and the transport: the last look sees it and the request is cancelled.
    expect((await move(a.enrollmentId, { sequenceId: s2 })).statusCode).toBe(200);
    expect(await lastLook(outbox, ca)).toEqual({ ok: false, reason: 'enrollment moved' });
    expect((await requests(a.enrollmentId)).map((r) => r.state)).toEqual(['cancelled']);
    // b: the transport already had it when the move committed: recorded as sent, once, on the old enrollment.
    expect(await lastLook(outbox, cb)).toEqual({ ok: true });
    expect((await move(b.enrollmentId, { sequenceId: s2 })).statusCode).toBe(200);
    expect(await recordSent(outbox, cb, Date.now())).toBe(true);
    expect(await recordSent(outbox, cb, Date.now())).toBe(false);
    expect((await requests(b.enrollmentId)).map((r) => r.state)).toEqual(['sent']);
    expect(await get(b.enrollmentId)).toMatchObject({ state: 'moved' });
    const old = await h.store.db.selectFrom('enrollment').select('done_step_ids').where('id', '=', b.enrollmentId).executeTakeFirstOrThrow();
    expect(old.done_step_ids).toEqual([cb.stepId]);
    // Nothing for the old enrollments is ever queued again.
    await service.fireDue(100);
    expect((await requests(a.enrollmentId)).map((r) => r.state)).toEqual(['cancelled']);
    expect(await live(b.leadId)).toEqual([{ id: expect.any(String), sequence_id: s2 }]);
  });

  it("a reply to the old sequence's message stops the new enrollment", async () => {
    const e = await enrolled(s1);
    const moved = (await move(e.enrollmentId, { sequenceId: s2 })).json<{ to: Enr }>().to;
    const r = await service.apply(e.enrollmentId, { type: 'reply', messageId: '<answer@prospects.test>' });
    expect(r.next).toMatchObject({ id: moved.id, state: 'replied' });
    expect(await get(e.enrollmentId)).toMatchObject({ state: 'moved' });
    expect(await get(moved.id)).toMatchObject({ state: 'replied' });
  });

  it('never leaves two live enrollments: a second move of the same enrollment, concurrent or later, is refused', async () => {
    const s3 = await sequence('Third');
    const e = await enrolled(s1);
    const [x, y] = await Promise.all([move(e.enrollmentId, { sequenceId: s2 }), move(e.enrollmentId, { sequenceId: s3 })]);
    expect([x.statusCode, y.statusCode].sort()).toEqual([200, 409]);
    expect([x, y].find((r) => r.statusCode === 409)!.json().error.code).toBe('INVALID_TRANSITION');
    expect(await live(e.leadId)).toHaveLength(1);
    // Back to the first sequence: the lead was in it already (one enrollment per lead and sequence, as enroll).
    const to = (x.statusCode === 200 ? x : y).json<{ to: Enr }>().to;
    const back = await move(to.id, { sequenceId: s1 });
    expect(back.statusCode).toBe(409);
    expect(back.json().error.code).toBe('ALREADY_ENROLLED');
    expect(await get(to.id)).toMatchObject({ state: 'active' });
    const same = await move(to.id, { sequenceId: to.sequenceId });
    expect(same.json().error.code).toBe('INVALID_INPUT');
  });

  it('refuses a finished enrollment, a suppressed lead and a draft target, and changes nothing', async () => {
    const done = await enrolled(s1);
    await service.apply(done.enrollmentId, { type: 'stop', reason: 'done' });
    const r1 = await move(done.enrollmentId, { sequenceId: s2 });
    expect([r1.statusCode, r1.json().error.code]).toEqual([409, 'INVALID_TRANSITION']);
    expect(r1.json().error.message).toContain('stopped');

    const sup = await enrolled(s1);
    await h.store.db.insertInto('suppression').values({ workspace_id: ws, email_norm: sup.email, reason: 'manual', source: 'test' }).execute();
    const r2 = await move(sup.enrollmentId, { sequenceId: s2 });
    expect([r2.statusCode, r2.json().error.code]).toEqual([409, 'SUPPRESSED']);
    expect(await get(sup.enrollmentId)).toMatchObject({ state: 'active', movedTo: null });

    const draft = await sequence('Not yet', { status: 'draft' });
    const e = await enrolled(s1);
    const r3 = await move(e.enrollmentId, { sequenceId: draft });
    expect([r3.statusCode, r3.json().error.code]).toEqual([409, 'CONFLICT']);
    expect(await live(e.leadId)).toEqual([{ id: e.enrollmentId, sequence_id: s1 }]);
  });

  it("refuses another workspace's sequence with 404, and leaves the enrollment as it was", async () => {
    const wb = await seedWorkspace(h.store, 'B', 'owner-b@example.test');
    const gb = await seedGraph(h.store, wb.workspaceId, 'b', wb.userId);
    const e = await enrolled(s1);
    const r = await move(e.enrollmentId, { sequenceId: gb.sequenceId });
    expect([r.statusCode, r.json().error.code]).toEqual([404, 'NOT_FOUND']);
    const bulk = await owner.call('POST', `/api/workspaces/${ws}/enrollments/move`, { enrollmentIds: [e.enrollmentId], sequenceId: gb.sequenceId });
    expect(bulk.statusCode).toBe(404);
    expect(await get(e.enrollmentId)).toMatchObject({ state: 'active', movedTo: null });
    // B's owner cannot move A's enrollment into B either.
    const ownerB = await login(h.app, 'owner-b@example.test', wb.password);
    expect((await ownerB.call('POST', `/api/workspaces/${wb.workspaceId}/enrollments/${e.enrollmentId}/move`, { sequenceId: gb.sequenceId })).statusCode).toBe(404);
  });

  it('starts at a given step (the ones before it never run); an unknown step is a 400', async () => {
    const e = await enrolled(s1);
    const bad = await move(e.enrollmentId, { sequenceId: s2, startAtStep: 'nope' });
    expect([bad.statusCode, bad.json().error.code]).toEqual([400, 'INVALID_INPUT']);
    // Its first email would then be bump, which has no subject: it continues the lead's thread, and nothing was sent yet.
    const threadless = await move(e.enrollmentId, { sequenceId: s2, startAtStep: 'ring' });
    expect([threadless.statusCode, threadless.json().error.code, threadless.json().error.details.reason]).toEqual([409, 'CONFLICT', 'no_thread']);
    expect(threadless.json().error.message).toMatch(/first email \(step bump\) has no subject.*nothing was sent to the lead from that mailbox yet/);
    await service.fireDue(100);
    for (let c = await claimNext(outbox, g.mailboxId!); c.kind !== 'empty'; c = await claimNext(outbox, g.mailboxId!)) if (c.kind === 'claimed') await recordSent(outbox, c.claim, Date.now());
    const r = await move(e.enrollmentId, { sequenceId: s2, startAtStep: 'ring' });
    expect(r.json<{ to: Enr }>().to).toMatchObject({ nextStepKey: 'ring', state: 'active' });
  });

  it("lets the target's rotation choose when the mailbox is not in the target's pool", async () => {
    const other = id();
    await h.store.db.insertInto('mailbox').values({ id: other, workspace_id: ws, user_id: null, email: 'rep-other@example.test', provider: 'smtp_imap' }).execute();
    const elsewhere = await sequence('Other pool', { mailboxes: ['rep-other@example.test'] });
    const e = await enrolled(s1);
    const to = (await move(e.enrollmentId, { sequenceId: elsewhere })).json<{ to: Enr }>().to;
    expect(to.mailboxId).toBe(other);
  });

  it('is in the OpenAPI document with example bodies', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, { post?: { requestBody?: { content: Record<string, { schema: { $ref?: string } }> } } }>;
      components: { schemas: Record<string, { examples?: unknown[] }> };
    }>();
    for (const path of ['/api/workspaces/{workspaceId}/enrollments/{enrollmentId}/move', '/api/workspaces/{workspaceId}/enrollments/move']) {
      const ref = doc.paths[path]?.post?.requestBody?.content['application/json']?.schema.$ref ?? '';
      expect(doc.components.schemas[ref.split('/').pop()!]?.examples?.length, path).toBeGreaterThan(0);
    }
    // Every named schema a path refers to is in the document (they once were dangling $refs).
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((r) => !doc.components.schemas[r])).toEqual([]);
  });

  it('moves in bulk, each id moved or skipped with its reason; more than 1,000 ids is a 400', async () => {
    const s4 = await sequence('Bulk target');
    const a = await enrolled(s1);
    const b = await enrolled(s1);
    const stopped = await enrolled(s1);
    await service.apply(stopped.enrollmentId, { type: 'stop' });
    const unknown = id();
    const r = await owner.call('POST', `/api/workspaces/${ws}/enrollments/move`, { enrollmentIds: [a.enrollmentId, stopped.enrollmentId, unknown, b.enrollmentId], sequenceId: s4 });
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json<{ moved: number; skipped: number; results: Array<{ enrollmentId: string; outcome: string; reason?: string; newEnrollmentId?: string }> }>();
    expect(body).toMatchObject({ moved: 2, skipped: 2 });
    expect(body.results.map((x) => [x.enrollmentId, x.outcome, x.reason])).toEqual([
      [a.enrollmentId, 'moved', undefined],
      [stopped.enrollmentId, 'skipped', 'not_live'],
      [unknown, 'skipped', 'not_found'],
      [b.enrollmentId, 'moved', undefined],
    ]);
    expect((await live(a.leadId)).map((x) => x.sequence_id)).toEqual([s4]);
    const tooMany = await owner.call('POST', `/api/workspaces/${ws}/enrollments/move`, { enrollmentIds: Array.from({ length: 1001 }, () => id()), sequenceId: s4 });
    expect(tooMany.statusCode).toBe(400);
  });
});
