import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedGraph, seedMember, seedWorkspace, type ObjectIds } from '../../../test/api.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import type { SystemMessage } from '../system-mailer.ts';
import { sendDueDigests } from './digest.ts';
import { fanOut } from './fanout.ts';
import { deliverSlack } from './slack.ts';
import { sealSlackUrl } from './slack-url.ts';
import { listBell, markRead } from './sql/bell.ts';
import { saveChoices, saveSlackUrl } from './sql/preferences.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 11, 1, 9);

/**
 * Notifications end to end below the routes (issue 19), on both stores and a simulated clock: the
 * triggers record each fact once (a reply read as interested, a task, a mailbox's health going
 * bad), the fan-out hands them to the members who want them (once, whatever runs it twice), the
 * digest gathers them into one mail after the chosen hours and sends nothing when nothing waits, and
 * Slack posts reach a loopback receiver, a failing one retried with backoff without holding the other.
 */
describe.each(testBackends())('notifications (%s)', (backend) => {
  let store: TestStore;
  let ws: string;
  let owner: string;
  let rep: string;
  let g: ObjectIds;
  const random = seededRandom(`notify-${backend}`);
  const clock = new SimClock(T0);
  const vault = () => new Vault(store, localKeyWrapper(master));
  const master = randomBytes(32);

  const interestedReply = async (n: number) => {
    const id = newId(clock.now(), random);
    await store.db
      .insertInto('message')
      .values({ id, workspace_id: ws, mailbox_id: g.mailboxId!, enrollment_id: g.enrollmentId!, direction: 'inbound', message_id: `<yes-${n}-${backend}@prospects.test>`, subject: `Re: Hi (${n})`, at: new Date(clock.now()), intent: 'interested', intent_confidence: 0.9 })
      .execute();
    return id;
  };
  const events = () => store.db.selectFrom('notification_event').select(['kind', 'source_key', 'user_id', 'title']).where('workspace_id', '=', ws).orderBy('id').execute();

  beforeAll(async () => {
    store = await freshStore(backend);
    const w = await seedWorkspace(store, `Notify ${backend}`, `owner-${backend}@notify.test`);
    ws = w.workspaceId;
    owner = w.userId;
    rep = (await seedMember(store, ws, `rep-${backend}@notify.test`, 'member')).userId;
    g = await seedGraph(store, ws, `n-${backend}`, rep);
  }, 120_000);
  afterAll(async () => {
    await store?.destroy();
  });

  it('records each fact once, keyed by its source', async () => {
    // seedGraph's call task is a task due; its reply was not read as interested.
    expect((await events()).map((e) => e.kind)).toEqual(['task_due']);
    await interestedReply(1);
    // The mailbox: bad, the same again, back to ok and bad again with the same reason the same day.
    const health = (h: 'ok' | 'warning' | 'paused', reason: string | null) => store.db.updateTable('mailbox').set({ health: h, health_reason: reason }).where('id', '=', g.mailboxId!).execute();
    await health('warning', 'bounce rate 6% over the last 50 sends');
    await health('warning', 'bounce rate 6% over the last 50 sends');
    await health('ok', null);
    await health('warning', 'bounce rate 6% over the last 50 sends');
    await health('paused', 'the server refused the password');
    const e = await events();
    expect(e.map((x) => x.kind)).toEqual(['task_due', 'reply_positive', 'mailbox_attention', 'mailbox_attention']);
    expect(e.every((x) => x.user_id === rep)).toBe(true);
    expect(e[1]!.title).toBe(`Interested reply from Lead n-${backend}`);
    expect(new Set(e.map((x) => x.source_key)).size).toBe(4);
  });

  it("hands events to their rep, and to a member who asked for the whole workspace's; twice is once", async () => {
    expect(await fanOut({ store, clock })).toBe(4);
    expect(await fanOut({ store, clock })).toBe(0);
    const repBell = await listBell(store.db, ws, rep, { limit: 10, unreadOnly: false });
    expect(repBell.unread).toBe(4);
    expect(repBell.items.map((i) => i.kind)).toEqual(['mailbox_attention', 'mailbox_attention', 'reply_positive', 'task_due']);
    expect((await listBell(store.db, ws, owner, { limit: 10, unreadOnly: false })).items).toEqual([]);
    // The owner asks for everyone's replies, by email only.
    await saveChoices(store.db, ws, owner, { kinds: { reply_positive: { inApp: false, browser: false, email: true, slack: false } }, scope: 'all', digestEveryHours: 4 }, new Date(clock.now()));
    await interestedReply(2);
    expect(await fanOut({ store, clock })).toBe(1);
    expect((await listBell(store.db, ws, owner, { limit: 10, unreadOnly: false })).items).toEqual([]);
    const mine = await store.db.selectFrom('notification').select(['email_state']).where('user_id', '=', owner).execute();
    expect(mine).toEqual([{ email_state: 'pending' }]);
    // Marked read: only the member's own.
    const first = repBell.items[0]!.id;
    expect(await markRead(store.db, ws, owner, [first], new Date(clock.now()))).toBe(0);
    expect(await markRead(store.db, ws, rep, [first], new Date(clock.now()))).toBe(1);
    expect(await markRead(store.db, ws, rep, 'all', new Date(clock.now()))).toBe(4);
    expect((await listBell(store.db, ws, rep, { limit: 10, unreadOnly: true })).unread).toBe(0);
  });

  it('mails the digest hours after its oldest item, once, retries a refused send, and sends nothing when nothing waits', async () => {
    const sent: SystemMessage[] = [];
    let refuse = true;
    const mailer = { from: 'cadenza@notify.test', close: () => undefined, send: async (m: SystemMessage) => {
      if (refuse) throw new Error('451 4.3.0 try again later');
      sent.push(m);
      return { messageId: `<d${sent.length}@notify.test>` };
    } };
    const run = () => sendDueDigests({ store, clock, random, mailer, appUrl: 'https://cadenza.example.test' });
    // The owner's digest is every 4 hours: nothing before.
    clock.advance(3 * HOUR);
    expect(await run()).toEqual({ sent: [], failed: [] });
    clock.advance(HOUR);
    expect((await run()).failed).toEqual([{ userId: owner, error: '451 4.3.0 try again later' }]);
    // The retry waits for its backoff (at most a minute after the first failure), then goes.
    refuse = false;
    expect(await run()).toEqual({ sent: [], failed: [] });
    clock.advance(61_000);
    expect((await run()).sent).toEqual([{ userId: owner, items: 1 }]);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: `owner-${backend}@notify.test`, subject: `Cadenza: 1 notification in Notify ${backend}` });
    expect(sent[0]!.text).toContain(`- Interested reply from Lead n-${backend}: Re: Hi (2)`);
    expect(sent[0]!.text).toContain('https://cadenza.example.test/inbox');
    // Nothing waits: nothing goes, however long.
    clock.advance(48 * HOUR);
    expect(await run()).toEqual({ sent: [], failed: [] });
    expect(sent).toHaveLength(1);
  });

  it('posts to Slack receivers on loopback: a failing one is retried with backoff and never holds the other', async () => {
    const got: Array<{ path: string; body: { text: string; blocks: Array<{ type: string }> } }> = [];
    let failing = 2;
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/flaky' && failing-- > 0) return void res.writeHead(500).end('no');
        got.push({ path: req.url!, body: JSON.parse(body) });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const policy = { allowPrivate: true };
      const v = vault();
      for (const [who, path] of [[rep, '/steady'], [owner, '/flaky']] as const) {
        const s = await sealSlackUrl(v, policy, ws, who, `${base}${path}`);
        expect(s.sealed.toString('latin1')).not.toContain(path);
        await saveSlackUrl(store.db, ws, who, s.sealed, s.host, new Date(clock.now()));
        await saveChoices(store.db, ws, who, { kinds: { reply_positive: { inApp: true, browser: true, email: false, slack: true } }, scope: who === owner ? 'all' : 'mine', digestEveryHours: 24 }, new Date(clock.now()));
      }
      await interestedReply(3);
      expect(await fanOut({ store, clock })).toBe(1);
      const deliver = () => deliverSlack({ store, clock, random, sealer: v, allowPrivate: true, appUrl: 'https://cadenza.example.test', timeoutMs: 5_000 });
      expect(await deliver()).toEqual({ delivered: 1, retried: 1, failed: 0 });
      expect(got.map((x) => x.path)).toEqual(['/steady']);
      expect(got[0]!.body.text).toBe(`Interested reply from Lead n-${backend}: Re: Hi (3)`);
      expect(got[0]!.body.blocks.map((b) => b.type)).toEqual(['section', 'context']);
      // Not before its backoff (30 s at most for the first retry); then another 500, then through.
      expect(await deliver()).toEqual({ delivered: 0, retried: 0, failed: 0 });
      clock.advance(31_000);
      expect(await deliver()).toEqual({ delivered: 0, retried: 1, failed: 0 });
      clock.advance(61_000);
      expect(await deliver()).toEqual({ delivered: 1, retried: 0, failed: 0 });
      expect(got.map((x) => x.path)).toEqual(['/steady', '/flaky']);
      const rows = await store.db.selectFrom('notification_slack').select(['state', 'attempts', 'last_error']).where('workspace_id', '=', ws).orderBy('attempts').execute();
      expect(rows).toEqual([{ state: 'delivered', attempts: 1, last_error: null }, { state: 'delivered', attempts: 3, last_error: null }]);
      // A URL on loopback is refused where private destinations are not allowed, on save and at delivery.
      await expect(sealSlackUrl(v, { allowPrivate: false }, ws, rep, `${base}/steady`)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
