import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedGraph, seedWorkspace, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { addMembership } from '../auth/accounts.ts';
import { hashPassword } from '../auth/passwords.ts';

type Item = { id: string; unread: boolean; assigneeId: string | null; teamLabels: Array<{ id: string; name: string }>; company: string | null; sequenceName: string | null };
const HOUR = 3_600_000;

describe.each(testBackends())('inbox search, filters and triage (%s)', (backend) => {
  // The API's world clock, moved by the test: a snooze comes due when it says so.
  const clock = new SimClock(Date.now());
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let rep: Browser;
  let other: Browser;
  let ownerId: string;
  let repId: string;
  let otherId: string;
  let mine: ObjectIds;
  let theirs: ObjectIds;
  /** Inbound messages added beside the seeded ones, by name. */
  const m: Record<string, string> = {};

  const list = async (b: Browser, query = '') => {
    const r = await b.call('GET', `/api/workspaces/${ws}/inbox?limit=100${query}`);
    expect(r.statusCode, r.body).toBe(200);
    return r.json<{ items: Item[] }>().items;
  };
  const ids = async (b: Browser, query = '') => (await list(b, query)).map((i) => i.id).sort();

  beforeAll(async () => {
    h = await apiHarness(backend, { realClock: systemClock }, { clock });
    const w = await seedWorkspace(h.store, 'A', 'owner@example.test');
    ws = w.workspaceId;
    ownerId = w.userId;
    const random = seededRandom('inbox-triage');
    const members: string[] = [];
    for (const who of ['rep', 'other']) {
      const accountId = newId(Date.now(), random);
      await h.store.db.insertInto('account').values({ id: accountId, email: `${who}@example.test`, name: who, password_hash: await hashPassword('member password 1') }).execute();
      members.push(await addMembership(h.store.db, { clock: systemClock, random }, { accountId, workspaceId: ws, email: `${who}@example.test`, name: who, role: 'member' }));
    }
    [repId, otherId] = members as [string, string];
    mine = await seedGraph(h.store, ws, 'rep', repId);
    theirs = await seedGraph(h.store, ws, 'other', otherId);
    await h.store.db.updateTable('lead').set({ company: 'Acme Robotics' }).where('id', '=', mine.leadId!).execute();
    const add = async (name: string, v: { mailboxId: string; from: string; subject: string; excerpt: string; intent?: string; enrollmentId?: string; html?: string }) => {
      m[name] = newId(clock.now(), random);
      await h.store.db
        .insertInto('message')
        .values({
          id: m[name], workspace_id: ws, mailbox_id: v.mailboxId, enrollment_id: v.enrollmentId ?? null, direction: 'inbound', message_id: `<${name}@prospects.test>`, subject: v.subject,
          from_addr: v.from, at: new Date(clock.now() - Object.keys(m).length * 60_000), folder: 'inbox', label: 'human_reply', confidence: 0.95, rung: 'rules', action: 'inbox',
          intent: v.intent ?? null, excerpt: v.excerpt, new_text: v.excerpt, body_html: v.html ?? null,
        })
        .execute();
    };
    await add('dana', { mailboxId: mine.mailboxId!, from: 'dana.ross@globex.test', subject: 'Pricing for 40 seats', excerpt: 'Could you send the quote?', intent: 'interested', enrollmentId: mine.enrollmentId! });
    await add('lee', { mailboxId: mine.mailboxId!, from: 'lee@initech.test', subject: 'Not now', excerpt: 'We renewed with a competitor, ask again in spring.', intent: 'not_interested' });
    await add('html', {
      mailboxId: theirs.mailboxId!, from: 'kim@umbrella.test', subject: 'Brochure', excerpt: 'See the attached brochure',
      html: '<p>See <b>this</b><img src="https://tracker.test/open.gif"><script>parent.hacked=1</script></p><blockquote>old</blockquote>',
    });
    owner = await login(h.app, 'owner@example.test', w.password);
    rep = await login(h.app, 'rep@example.test', 'member password 1');
    other = await login(h.app, 'other@example.test', 'member password 1');
  }, 60_000);
  afterAll(async () => h?.close());

  it('searches sender, subject and text as word prefixes, within the caller’s scope', async () => {
    expect(await ids(owner, '&q=dana')).toEqual([m.dana]);
    expect(await ids(owner, '&q=globex')).toEqual([m.dana]);
    expect(await ids(owner, '&q=dana.ross%40globex.test')).toEqual([m.dana]);
    expect(await ids(owner, '&q=PRIC')).toEqual([m.dana]);
    expect(await ids(owner, '&q=competitor%20spring')).toEqual([m.lee]);
    expect(await ids(owner, '&q=competitor%20autumn')).toEqual([]);
    // Punctuation alone is no search (and nothing tsquery would read as an operator gets through).
    expect(await ids(owner, `&q=${encodeURIComponent("&|!:*()'")}`)).toHaveLength(5);
    // The rep searches only their own mailboxes' mail.
    expect(await ids(rep, '&q=brochure')).toEqual([]);
    expect(await ids(owner, '&q=brochure')).toEqual([m.html]);
    const long = await owner.call('GET', `/api/workspaces/${ws}/inbox?q=${'a'.repeat(201)}`);
    expect(long.statusCode).toBe(400);
    expect(long.json().error.details.issues[0].path).toBe('querystring.q');
  });

  it('filters by intent, label, sequence, mailbox, rep and review; the row carries company and sequence', async () => {
    expect(await ids(owner, '&intent=interested')).toEqual([m.dana]);
    expect(await ids(owner, `&sequenceId=${mine.sequenceId}`)).toEqual([m.dana, mine.messageId].sort());
    expect(await ids(owner, `&mailboxId=${theirs.mailboxId}`)).toEqual([theirs.messageId, m.html].sort());
    expect(await ids(owner, `&repId=${repId}`)).toEqual([mine.messageId, m.dana, m.lee].sort());
    expect(await ids(owner, '&needsReview=true')).toEqual([mine.messageId, theirs.messageId].sort());
    expect(await ids(owner, '&label=human_reply&needsReview=false')).toEqual([m.dana, m.lee, m.html].sort());
    const dana = (await list(owner, '&q=dana'))[0]!;
    expect(dana).toMatchObject({ company: 'Acme Robotics', sequenceName: 'Sequence rep' });
  });

  it('read marks are per person', async () => {
    expect((await list(owner, '&q=dana'))[0]!.unread).toBe(true);
    const r = await owner.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.dana}`, { read: true });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ unread: false, assigneeId: null, snoozedUntil: null, doneAt: null });
    expect((await list(owner, '&q=dana'))[0]!.unread).toBe(false);
    expect((await list(rep, '&q=dana'))[0]!.unread).toBe(true);
    expect(await ids(owner, '&unread=false')).toEqual([m.dana]);
    expect(await ids(rep, '&unread=false')).toEqual([]);
    await owner.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.dana}`, { read: false });
    expect(await ids(owner, '&unread=false')).toEqual([]);
  });

  it('a snoozed message leaves the inbox and comes back when its time comes (simulated clock)', async () => {
    const past = await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.lee}`, { snoozedUntil: new Date(clock.now() - 1000).toISOString() });
    expect(past.statusCode).toBe(400);
    expect(past.json().error.details.field).toBe('snoozedUntil');
    const until = new Date(clock.now() + 2 * HOUR).toISOString();
    expect((await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.lee}`, { snoozedUntil: until })).json()).toMatchObject({ snoozedUntil: until });
    expect(await ids(rep)).not.toContain(m.lee);
    expect(await ids(rep, '&status=snoozed')).toEqual([m.lee]);
    clock.advance(2 * HOUR - 1000);
    expect(await ids(rep)).not.toContain(m.lee);
    clock.advance(1000);
    expect(await ids(rep)).toContain(m.lee);
    expect(await ids(rep, '&status=snoozed')).toEqual([]);
  });

  it('a snooze that came due returns to the top of the inbox, listed from when it woke, and pages without a repeat or a gap', async () => {
    // The rep's three, newest first: their seeded reply, dana, then lee (the oldest).
    const before = (await list(rep)).map((i) => i.id);
    const oldest = before[before.length - 1]!;
    expect(before.length).toBeGreaterThanOrEqual(3);
    const until = new Date(clock.now() + HOUR).toISOString();
    expect((await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${oldest}`, { snoozedUntil: until })).statusCode).toBe(200);
    clock.advance(HOUR);
    const after = (await list(rep)).map((i) => i.id);
    expect(after).toEqual([oldest, ...before.slice(0, -1)]);
    // One a page, through the cursor: the same order, each once.
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await rep.call('GET', `/api/workspaces/${ws}/inbox?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.statusCode, r.body).toBe(200);
      const body = r.json<{ items: Item[]; nextCursor: string | null }>();
      paged.push(...body.items.map((i) => i.id));
      cursor = body.nextCursor;
    } while (cursor && paged.length < 10);
    expect(paged).toEqual(after);
    // Mail that arrives after it woke is listed above it.
    const newer = newId(clock.now(), seededRandom('newer'));
    await h.store.db
      .insertInto('message')
      .values({ id: newer, workspace_id: ws, mailbox_id: mine.mailboxId!, direction: 'inbound', message_id: '<newer@prospects.test>', subject: 'One more thing', from_addr: 'dana.ross@globex.test', at: new Date(clock.now() + 60_000), folder: 'inbox', label: 'human_reply', confidence: 0.95, rung: 'rules', action: 'inbox', excerpt: 'And also', new_text: 'And also' })
      .execute();
    expect((await list(rep)).map((i) => i.id).slice(0, 2)).toEqual([newer, oldest]);
    await h.store.db.deleteFrom('message').where('id', '=', newer).execute();
  });

  it('a snooze woken by hand returns to the top of the inbox, listed from that moment', async () => {
    const before = (await list(rep)).map((i) => i.id);
    const oldest = before[before.length - 1]!;
    expect((await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${oldest}`, { snoozedUntil: new Date(clock.now() + 24 * HOUR).toISOString() })).statusCode).toBe(200);
    clock.advance(HOUR);
    expect(await ids(rep)).not.toContain(oldest);
    const woken = await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${oldest}`, { snoozedUntil: null });
    expect(woken.json()).toMatchObject({ snoozedUntil: null });
    expect((await list(rep)).map((i) => i.id)).toEqual([oldest, ...before.filter((x) => x !== oldest)]);
    expect(await ids(rep, '&status=snoozed')).toEqual([]);
    // Waking what was never snoozed changes nothing.
    const dana = await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.dana}`, { snoozedUntil: null });
    expect(dana.json()).toMatchObject({ snoozedUntil: null });
  });

  it('done archives; done false brings it back', async () => {
    expect((await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.lee}`, { done: true })).json().doneAt).not.toBeNull();
    expect(await ids(rep)).not.toContain(m.lee);
    expect(await ids(rep, '&status=done')).toEqual([m.lee]);
    await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.lee}`, { done: false });
    expect(await ids(rep)).toContain(m.lee);
    const empty = await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.lee}`, {});
    expect(empty.statusCode).toBe(400);
  });

  it('assigns to a teammate who may read the mailbox; filters by assignee', async () => {
    const refused = await owner.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.dana}`, { assigneeId: otherId });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.message).toMatch(/only their own mailboxes/);
    const stranger = await owner.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.dana}`, { assigneeId: '00000000-0000-4000-8000-000000000001' });
    expect(stranger.statusCode).toBe(400);
    expect((await owner.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.dana}`, { assigneeId: repId })).json().assigneeId).toBe(repId);
    expect(await ids(rep, `&assigneeId=${repId}`)).toEqual([m.dana]);
    await owner.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.dana}`, { assigneeId: null });
    expect(await ids(rep, `&assigneeId=${repId}`)).toEqual([]);
  });

  it('keeps the inbox scope: a message outside it cannot be triaged, labelled or noted', async () => {
    expect((await rep.call('PATCH', `/api/workspaces/${ws}/inbox/messages/${m.html}`, { read: true })).statusCode).toBe(404);
    expect((await rep.call('POST', `/api/workspaces/${ws}/inbox/messages/${m.html}/notes`, { body: 'x' })).statusCode).toBe(404);
    expect((await rep.call('GET', `/api/workspaces/${ws}/inbox/messages/${m.html}/frame`)).statusCode).toBe(404);
    const label = (await rep.call('POST', `/api/workspaces/${ws}/inbox/labels`, { name: 'Scope test' })).json<{ id: string }>();
    expect((await rep.call('PUT', `/api/workspaces/${ws}/inbox/messages/${m.html}/labels/${label.id}`)).statusCode).toBe(404);
  });

  it('team labels: defined, applied, filtered, removed; deleted by an admin only', async () => {
    const c = await rep.call('POST', `/api/workspaces/${ws}/inbox/labels`, { name: 'Pricing', color: 'blue' });
    expect(c.statusCode).toBe(201);
    const label = c.json<{ id: string; name: string; color: string }>();
    expect((await owner.call('POST', `/api/workspaces/${ws}/inbox/labels`, { name: 'pricing' })).statusCode).toBe(409);
    expect((await rep.call('POST', `/api/workspaces/${ws}/inbox/labels`, { name: 'x', color: 'pink' })).statusCode).toBe(400);
    expect((await rep.call('PUT', `/api/workspaces/${ws}/inbox/messages/${m.dana}/labels/${label.id}`)).statusCode).toBe(200);
    expect((await rep.call('PUT', `/api/workspaces/${ws}/inbox/messages/${m.dana}/labels/${label.id}`)).statusCode).toBe(200);
    expect(await ids(rep, `&teamLabelId=${label.id}`)).toEqual([m.dana]);
    expect((await list(rep, '&q=dana'))[0]!.teamLabels).toEqual([label]);
    expect((await rep.call('DELETE', `/api/workspaces/${ws}/inbox/messages/${m.dana}/labels/${label.id}`)).statusCode).toBe(200);
    expect(await ids(rep, `&teamLabelId=${label.id}`)).toEqual([]);
    await rep.call('PUT', `/api/workspaces/${ws}/inbox/messages/${m.dana}/labels/${label.id}`);
    expect((await rep.call('DELETE', `/api/workspaces/${ws}/inbox/labels/${label.id}`)).statusCode).toBe(403);
    expect((await owner.call('DELETE', `/api/workspaces/${ws}/inbox/labels/${label.id}`)).statusCode).toBe(200);
    expect((await list(rep, '&q=dana'))[0]!.teamLabels).toEqual([]);
  });

  it('notes: on the conversation, deleted by their author or an admin', async () => {
    const n = await owner.call('POST', `/api/workspaces/${ws}/inbox/messages/${m.dana}/notes`, { body: 'Wants 40 seats; call Thursday' });
    expect(n.statusCode).toBe(201);
    const note = n.json<{ id: string }>();
    expect((await rep.call('POST', `/api/workspaces/${ws}/inbox/messages/${m.dana}/notes`, { body: '   ' })).statusCode).toBe(400);
    const d = (await rep.call('GET', `/api/workspaces/${ws}/inbox/messages/${m.dana}`)).json<{ notes: Array<{ id: string; body: string; author: string }> }>();
    expect(d.notes).toEqual([expect.objectContaining({ id: note.id, body: 'Wants 40 seats; call Thursday', author: 'A' })]);
    expect((await rep.call('DELETE', `/api/workspaces/${ws}/inbox/notes/${note.id}`)).statusCode).toBe(403);
    expect((await other.call('DELETE', `/api/workspaces/${ws}/inbox/notes/${note.id}`)).statusCode).toBe(404);
    expect((await owner.call('DELETE', `/api/workspaces/${ws}/inbox/notes/${note.id}`)).statusCode).toBe(200);
  });

  it('saved views are each person’s own', async () => {
    const v = await rep.call('POST', `/api/workspaces/${ws}/inbox/views`, { name: 'Hot', filters: { intent: 'interested', unread: 'true' } });
    expect(v.statusCode).toBe(201);
    const view = v.json<{ id: string; filters: Record<string, string> }>();
    expect(view.filters).toEqual({ intent: 'interested', unread: 'true' });
    expect((await rep.call('POST', `/api/workspaces/${ws}/inbox/views`, { name: 'hot', filters: {} })).statusCode).toBe(409);
    expect((await rep.call('POST', `/api/workspaces/${ws}/inbox/views`, { name: 'Bad', filters: { status: 'maybe' } })).statusCode).toBe(400);
    // Ids the workspace does not have (another workspace's, or made up) are refused, each named.
    const unknown = '00000000-0000-4000-8000-000000000001';
    for (const field of ['teamLabelId', 'sequenceId', 'mailboxId', 'repId', 'assigneeId']) {
      const r = await rep.call('POST', `/api/workspaces/${ws}/inbox/views`, { name: `Alien ${field}`, filters: { [field]: unknown } });
      expect(r.statusCode, field).toBe(400);
      expect(r.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { field: `filters.${field}` } });
    }
    expect((await rep.call('GET', `/api/workspaces/${ws}/inbox/views`)).json<{ views: Array<{ name: string }> }>().views.map((x) => x.name)).toEqual(['Hot']);
    expect((await owner.call('GET', `/api/workspaces/${ws}/inbox/views`)).json<{ views: unknown[] }>().views).toEqual([]);
    expect((await owner.call('DELETE', `/api/workspaces/${ws}/inbox/views/${view.id}`)).statusCode).toBe(404);
    expect((await rep.call('DELETE', `/api/workspaces/${ws}/inbox/views/${view.id}`)).statusCode).toBe(200);
  });

  it("serves a reply's HTML sanitized, under a CSP that forbids scripts, remote images only when asked", async () => {
    const d = (await owner.call('GET', `/api/workspaces/${ws}/inbox/messages/${m.html}`)).json<{ html: { blockedImages: number } | null }>();
    expect(d.html).toEqual({ blockedImages: 1 });
    expect((await owner.call('GET', `/api/workspaces/${ws}/inbox/messages/${m.dana}`)).json().html).toBeNull();
    const f = await owner.call('GET', `/api/workspaces/${ws}/inbox/messages/${m.html}/frame`);
    expect(f.statusCode).toBe(200);
    expect(f.headers['content-type']).toMatch(/^text\/html/);
    expect(f.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'unsafe-inline'; img-src data:; .*sandbox allow-popups allow-popups-to-escape-sandbox$/);
    expect(f.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(f.body).not.toMatch(/<script|tracker\.test/);
    expect(f.body).toContain('<details class="cadenza-quoted"><summary>Show quoted history</summary><blockquote>old</blockquote></details>');
    const withImages = await owner.call('GET', `/api/workspaces/${ws}/inbox/messages/${m.html}/frame?images=true`);
    expect(withImages.headers['content-security-policy']).toContain('img-src data: https: http:');
    expect(withImages.body).toContain('src="https://tracker.test/open.gif"');
    expect(withImages.body).not.toContain('<script');
  });
});
