import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedGraph, seedWorkspace, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { addMembership } from '../auth/accounts.ts';
import { hashPassword } from '../auth/passwords.ts';

describe.each(testBackends())('inbox routes (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let rep: Browser;
  let other: Browser;
  let mine: ObjectIds;
  let theirs: ObjectIds;

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'A', 'owner@example.test');
    ws = w.workspaceId;
    const random = seededRandom('inbox');
    const members: string[] = [];
    for (const who of ['rep', 'other']) {
      const accountId = `0${who === 'rep' ? 1 : 2}a228f2-0000-7000-8000-000000000000`;
      await h.store.db.insertInto('account').values({ id: accountId, email: `${who}@example.test`, name: who, password_hash: await hashPassword('member password 1') }).execute();
      members.push(await addMembership(h.store.db, { clock: systemClock, random }, { accountId, workspaceId: ws, email: `${who}@example.test`, name: who, role: 'member' }));
    }
    mine = await seedGraph(h.store, ws, 'rep', members[0]!);
    theirs = await seedGraph(h.store, ws, 'other', members[1]!);
    owner = await login(h.app, 'owner@example.test', w.password);
    rep = await login(h.app, 'rep@example.test', 'member password 1');
    other = await login(h.app, 'other@example.test', 'member password 1');
  }, 60_000);
  afterAll(async () => h?.close());

  it("a member sees only their own mailboxes' mail; an owner sees all; granting 'all' widens it", async () => {
    const ids = async (b: Browser) => (await b.call('GET', `/api/workspaces/${ws}/inbox`)).json<{ items: Array<{ id: string }> }>().items.map((i) => i.id).sort();
    expect(await ids(rep)).toEqual([mine.messageId]);
    expect(await ids(owner)).toEqual([mine.messageId!, theirs.messageId!].sort());
    expect((await rep.call('GET', `/api/workspaces/${ws}/inbox/messages/${theirs.messageId}`)).statusCode).toBe(404);
    const repRow = (await owner.call('GET', `/api/workspaces/${ws}/members`)).json<{ members: Array<{ id: string; email: string }> }>().members.find((m) => m.email === 'rep@example.test')!;
    expect((await owner.call('PATCH', `/api/workspaces/${ws}/members/${repRow.id}`, { inboxScope: 'all' })).statusCode).toBe(200);
    expect(await ids(rep)).toEqual([mine.messageId!, theirs.messageId!].sort());
    await owner.call('PATCH', `/api/workspaces/${ws}/members/${repRow.id}`, { inboxScope: 'own' });
  });

  it('exports the list as CSV with the same filters and the same scope: a member gets only their mailboxes\' mail', async () => {
    const rows = async (b: Browser, q = '') => {
      const r = await b.call('GET', `/api/workspaces/${ws}/inbox.csv${q}`);
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toMatch(/^text\/csv/);
      return r.body.trimEnd().split('\r\n');
    };
    const all = await rows(owner, '?status=all');
    expect(all[0]).toBe('at,from,lead_name,company,subject,excerpt,label,intent,action,sequence,mailbox,unread,assignee_id,snoozed_until,done_at,team_labels');
    const listed = (await owner.call('GET', `/api/workspaces/${ws}/inbox?status=all&limit=200`)).json<{ items: Array<{ at: string }> }>().items;
    expect(all.length - 1).toBe(listed.length);
    expect(all.slice(1).map((l) => l.split(',')[0])).toEqual(listed.map((i) => i.at));
    // A member's export holds their own mailboxes' mail only, as their list does.
    const mineOnly = await rows(rep, '?status=all');
    const repListed = (await rep.call('GET', `/api/workspaces/${ws}/inbox?status=all&limit=200`)).json<{ items: unknown[] }>().items;
    expect(mineOnly.length - 1).toBe(repListed.length);
    expect(mineOnly.length).toBeLessThan(all.length);
    // A filter narrows it as it narrows the list.
    const review = await rows(owner, '?needsReview=true');
    const reviewListed = (await owner.call('GET', `/api/workspaces/${ws}/inbox?needsReview=true&limit=200`)).json<{ items: unknown[] }>().items;
    expect(review.length - 1).toBe(reviewListed.length);
    expect((await owner.call('GET', `/api/workspaces/${ws}/inbox.csv?status=nonsense`)).statusCode).toBe(400);
    expect((await other.call('GET', `/api/workspaces/${newId(Date.now(), seededRandom('x'))}/inbox.csv`)).statusCode).toBe(404);
  });

  it("a lead's timeline shows a member only the mail received in their own mailboxes", async () => {
    const received = async (b: Browser, leadId: string) =>
      (await b.call('GET', `/api/workspaces/${ws}/leads/${leadId}`)).json<{ timeline: Array<{ kind: string }> }>().timeline.filter((t) => t.kind === 'received').length;
    expect(await received(rep, mine.leadId!)).toBe(1);
    expect(await received(rep, theirs.leadId!)).toBe(0);
    expect(await received(owner, theirs.leadId!)).toBe(1);
  });

  it('pages with a cursor, filters the review queue, and refuses a forged cursor', async () => {
    const first = await owner.call('GET', `/api/workspaces/${ws}/inbox?limit=1&needsReview=true`);
    expect(first.statusCode).toBe(200);
    const p1 = first.json<{ items: Array<{ id: string; needsReview: boolean }>; nextCursor: string }>();
    expect(p1.items).toHaveLength(1);
    expect(p1.items[0]!.needsReview).toBe(true);
    const p2 = (await owner.call('GET', `/api/workspaces/${ws}/inbox?limit=1&needsReview=true&cursor=${p1.nextCursor}`)).json<{ items: Array<{ id: string }>; nextCursor: string | null }>();
    expect(p2.items).toHaveLength(1);
    expect(p2.items[0]!.id).not.toBe(p1.items[0]!.id);
    expect(p2.nextCursor).toBeNull();
    const bad = await owner.call('GET', `/api/workspaces/${ws}/inbox?cursor=bm9wZQ`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('INVALID_INPUT');
    const badLimit = await owner.call('GET', `/api/workspaces/${ws}/inbox?limit=0`);
    expect(badLimit.statusCode).toBe(400);
    expect(badLimit.json().error.details.issues[0].path).toBe('querystring.limit');
  });

  it('a message opens with its thread', async () => {
    const r = await rep.call('GET', `/api/workspaces/${ws}/inbox/messages/${mine.messageId}`);
    expect(r.statusCode).toBe(200);
    const body = r.json<{ message: { subject: string }; thread: Array<{ id: string; direction: string }> }>();
    expect(body.message.subject).toBe('Re: Hi');
    expect(body.thread.map((t) => t.id)).toContain(mine.messageId);
  });

  it('relabelling a held reply as a human reply stops the enrollment and leaves the review queue', async () => {
    const bad = await rep.call('POST', `/api/workspaces/${ws}/inbox/messages/${mine.messageId}/reclassify`, { label: 'spam' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0].path).toBe('body.label');
    const r = await rep.call('POST', `/api/workspaces/${ws}/inbox/messages/${mine.messageId}/reclassify`, { label: 'human_reply' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ action: 'reply', enrollmentState: 'replied' });
    const e = await h.store.db.selectFrom('enrollment').select('state').where('id', '=', mine.enrollmentId!).executeTakeFirstOrThrow();
    expect(e.state).toBe('replied');
    const m = await h.store.db.selectFrom('message').select(['label', 'rung', 'needs_review', 'reviewed_at']).where('id', '=', mine.messageId!).executeTakeFirstOrThrow();
    expect(m).toMatchObject({ label: 'human_reply', rung: 'person', needs_review: false });
    expect(m.reviewed_at).not.toBeNull();
    const queue = (await owner.call('GET', `/api/workspaces/${ws}/inbox?needsReview=true`)).json<{ items: Array<{ id: string }> }>();
    expect(queue.items.map((i) => i.id)).toEqual([theirs.messageId]);
  });

  it('relabelling as an unsubscribe request suppresses the lead in the whole workspace', async () => {
    const r = await owner.call('POST', `/api/workspaces/${ws}/inbox/messages/${theirs.messageId}/reclassify`, { label: 'unsubscribe_request' });
    expect(r.json()).toEqual({ action: 'unsubscribe', enrollmentState: 'unsubscribed' });
    const s = await h.store.db.selectFrom('suppression').select('reason').where('workspace_id', '=', ws).where('email_norm', '=', 'lead-other@prospects.test').executeTakeFirst();
    expect(s?.reason).toBe('unsubscribe');
  });

  it('a thread over 500 messages opens on its newest 500, and earlier pages follow from earlierCursor', async () => {
    type Detail = { thread: Array<{ id: string }>; earlierCursor: string | null };
    const open = async (query = '') => {
      const r = await rep.call('GET', `/api/workspaces/${ws}/inbox/messages/${mine.messageId}${query}`);
      expect(r.statusCode, r.body).toBe(200);
      return r.json<Detail>();
    };
    const existing = (await open()).thread.map((t) => t.id);
    expect((await open()).earlierCursor).toBeNull();
    // 520 older messages in the same conversation, a second apart, alternating sent and received.
    const first = await h.store.db.selectFrom('message').select('at').where('id', '=', existing[0]!).executeTakeFirstOrThrow();
    const random = seededRandom('long-thread');
    const older = Array.from({ length: 520 }, (_, i) => ({ id: newId(first.at.getTime() - 86_400_000 + i * 1000, random), at: new Date(first.at.getTime() - 86_400_000 + i * 1000), i }));
    await h.store.db
      .insertInto('message')
      .values(older.map((o) => ({ id: o.id, workspace_id: ws, mailbox_id: mine.mailboxId!, enrollment_id: mine.enrollmentId!, direction: o.i % 2 ? 'inbound' as const : 'outbound' as const, message_id: `<long-${o.i}@prospects.test>`, subject: `Re: Hi ${o.i}`, from_addr: 'lead-rep@prospects.test', at: o.at, folder: 'inbox', excerpt: `message ${o.i}` })))
      .execute();
    const whole = [...older.map((o) => o.id), ...existing];
    const newest = await open();
    expect(newest.thread).toHaveLength(500);
    expect(newest.thread.map((t) => t.id)).toEqual(whole.slice(-500));
    expect(newest.earlierCursor).not.toBeNull();
    const earlier = await open(`?threadBefore=${encodeURIComponent(newest.earlierCursor!)}`);
    expect(earlier.thread.map((t) => t.id)).toEqual(whole.slice(0, -500));
    expect(earlier.earlierCursor).toBeNull();
    // Smaller pages walk back to the first message, each once, in order.
    const pages: string[][] = [];
    let before: string | null = null;
    do {
      const p: Detail = await open(`?threadLimit=150${before ? `&threadBefore=${encodeURIComponent(before)}` : ''}`);
      pages.unshift(p.thread.map((t) => t.id));
      before = p.earlierCursor;
    } while (before && pages.length < 10);
    expect(pages.flat()).toEqual(whole);
    expect((await rep.call('GET', `/api/workspaces/${ws}/inbox/messages/${mine.messageId}?threadBefore=forged`)).statusCode).toBe(400);
    expect((await rep.call('GET', `/api/workspaces/${ws}/inbox/messages/${mine.messageId}?threadLimit=501`)).statusCode).toBe(400);
  });
});
