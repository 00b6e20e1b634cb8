import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedMember, seedWorkspace } from '../../../test/api.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { redactPaths } from '../../common/logger.ts';
import { seededRandom } from '../../common/random.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { fanOut } from './fanout.ts';
import { deliverSlack } from './slack.ts';
import { sealSlackUrl } from './slack-url.ts';
import { readSettings, saveChoices, saveSlackUrl } from './sql/preferences.ts';

const T0 = Date.UTC(2026, 11, 2, 9);

interface Got {
  path: string;
  contentType: string | undefined;
  body: { text: string; blocks: Array<{ type: string; text?: { type: string; text: string }; elements?: Array<{ type: string; text: string }> }> };
}

/**
 * The Slack-compatible incoming webhook against a real receiver: a loopback HTTP server plays
 * Slack, the production fan-out and delivery (fanout.ts, slack.ts, the webhooks' postWebhook) post
 * to it. Loopback is reachable only because the test runs with private destinations allowed (the
 * operator's CADENZA_WEBHOOK_ALLOW_PRIVATE); without it the same delivery refuses the receiver.
 * Each receiver path answers from a script (status, Retry-After) and records what it got.
 */
describe.each(testBackends())('Slack incoming webhook on a loopback receiver (%s)', (backend) => {
  let store: TestStore;
  let ws: string;
  let users: string[];
  let base: string;
  let server: http.Server;
  const got: Got[] = [];
  const hits: Array<{ path: string; at: number }> = [];
  /** Per path, the answers still to give (then 200). */
  const script = new Map<string, Array<{ status: number; headers?: Record<string, string> }>>();
  const clock = new SimClock(T0);
  const random = seededRandom(`slack-webhook-${backend}`);
  const master = randomBytes(32);
  const vault = () => new Vault(store, localKeyWrapper(master));
  const logs: string[] = [];
  const log = pino({ level: 'debug', redact: { paths: redactPaths, censor: '[redacted]' } }, new Writable({ write: (c: Buffer, _e, cb) => (logs.push(c.toString()), cb()) }));
  // The secret parts of the URLs: what must never reach a log or a stored error.
  const secretPath = (who: string) => `/services/T0CADENZA/B0${who}/${randomBytes(12).toString('hex')}`;
  const paths = new Map<string, string>();
  let seq = 0;

  const event = async (userId: string, title: string, body: string) => {
    seq++;
    await store.db.insertInto('notification_event').values({ workspace_id: ws, source_key: `test:${seq}`, kind: 'reply_positive', user_id: userId, title, body, link: '/inbox', occurred_at: new Date(clock.now()) }).execute();
  };
  const setUrl = async (userId: string, path: string) => {
    paths.set(userId, path);
    const s = await sealSlackUrl(vault(), { allowPrivate: true }, ws, userId, `${base}${path}`);
    await saveSlackUrl(store.db, ws, userId, s.sealed, s.host, new Date(clock.now()));
  };
  const deliver = (allowPrivate = true) => deliverSlack({ store, clock, random, sealer: vault(), log, allowPrivate, appUrl: 'https://cadenza.example.test', timeoutMs: 5_000 });
  const posts = (userId: string) => store.db.selectFrom('notification_slack').select(['state', 'attempts', 'last_error', 'response_code']).where('user_id', '=', userId).orderBy('id').execute();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const path = req.url!;
        hits.push({ path, at: clock.now() });
        const next = script.get(path)?.shift();
        if (next) return void res.writeHead(next.status, next.headers ?? {}).end('no_service');
        got.push({ path, contentType: req.headers['content-type'], body: JSON.parse(body) });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    store = await freshStore(backend);
    const w = await seedWorkspace(store, `Slack ${backend}`, `owner-${backend}@slack.test`);
    ws = w.workspaceId;
    users = [w.userId];
    for (const n of [1, 2, 3]) users.push((await seedMember(store, ws, `rep${n}-${backend}@slack.test`, 'member')).userId);
    for (const u of users) {
      await saveChoices(store.db, ws, u, { kinds: { reply_positive: { inApp: true, browser: false, email: false, slack: true } }, scope: 'mine', digestEveryHours: 24 }, new Date(clock.now()));
      await setUrl(u, secretPath(u.slice(0, 8)));
    }
  }, 120_000);
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await store?.destroy();
  });

  it("posts Slack's incoming-webhook body: JSON text and blocks, the event's text escaped, a link to the app", async () => {
    const [u] = users;
    await event(u!, 'Interested reply from Ann <ann@prospects.test>', 'Re: pricing & <b>terms</b>');
    expect(await fanOut({ store, clock })).toBe(1);
    expect(await deliver()).toEqual({ delivered: 1, retried: 0, failed: 0 });
    expect(got).toHaveLength(1);
    expect(got[0]!.path).toBe(paths.get(u!));
    expect(got[0]!.contentType).toBe('application/json');
    expect(got[0]!.body.text).toBe('Interested reply from Ann <ann@prospects.test>: Re: pricing & <b>terms</b>');
    expect(got[0]!.body.blocks).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: '*Interested reply from Ann &lt;ann@prospects.test&gt;*\nRe: pricing &amp; &lt;b&gt;terms&lt;/b&gt;' } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: '<https://cadenza.example.test/inbox|Open in Cadenza>' } ] },
    ]);
    expect(await posts(u!)).toEqual([{ state: 'delivered', attempts: 1, last_error: null, response_code: 200 }]);
  });

  it('retries a 503 and a 429 no sooner than their Retry-After asks, longer than its own backoff', async () => {
    const u = users[1]!;
    const path = paths.get(u)!;
    // 503 asking for 120 s (the backoff alone would retry within 30 s), then a 429 asking for 5 min
    // in an HTTP date (the second backoff would be at most 60 s), then through.
    script.set(path, [{ status: 503, headers: { 'retry-after': '120' } }, { status: 429, headers: { 'retry-after': new Date(T0 + 3_600_000).toUTCString() } }]);
    await event(u, 'Interested reply from Bo', 'Re: next week');
    expect(await fanOut({ store, clock })).toBe(1);
    const start = clock.now();
    expect(await deliver()).toEqual({ delivered: 0, retried: 1, failed: 0 });
    clock.advance(119_000);
    expect(await deliver()).toEqual({ delivered: 0, retried: 0, failed: 0 });
    clock.advance(1_000);
    expect(await deliver()).toEqual({ delivered: 0, retried: 1, failed: 0 });
    // The date is an hour after T0: 58 minutes from here, not the backoff's minute.
    clock.advance(60_000);
    expect(await deliver()).toEqual({ delivered: 0, retried: 0, failed: 0 });
    clock.advance(T0 + 3_600_000 - clock.now());
    expect(await deliver()).toEqual({ delivered: 1, retried: 0, failed: 0 });
    const mine = hits.filter((h) => h.path === path).map((h) => h.at - start);
    expect(mine).toEqual([0, 120_000, T0 + 3_600_000 - start]);
    expect(await posts(u)).toEqual([{ state: 'delivered', attempts: 3, last_error: null, response_code: 200 }]);
  });

  it.each([
    [404, 2],
    [410, 3],
  ])('a %i disables the webhook with a reason the member sees, fails what waits, queues nothing more, and a new URL lifts it', async (status, index) => {
    const u = users[index]!;
    const old = paths.get(u)!;
    script.set(old, [{ status }]);
    await event(u, 'Interested reply from Cy', 'Re: one');
    await event(u, 'Interested reply from Di', 'Re: two');
    expect(await fanOut({ store, clock })).toBe(2);
    const before = hits.length;
    const r = await deliver();
    // Both posts go in the same round: one or both meet the 404/410; none is retried.
    expect(r.retried).toBe(0);
    expect(r.failed + r.delivered).toBe(2);
    expect(hits.length - before).toBeGreaterThanOrEqual(1);
    const s = await readSettings(store.db, ws, u);
    expect(s.slackConfigured).toBe(true);
    expect(s.slackDisabledReason).toMatch(new RegExp(`^The Slack webhook answered HTTP ${status} on 2026-12-02 \\d\\d:\\d\\d UTC: it no longer exists`));
    expect(s.slackDisabledReason).not.toContain(old);
    const rows = await posts(u);
    expect(rows.filter((p) => p.state === 'pending')).toEqual([]);
    expect(rows.some((p) => p.state === 'failed' && p.response_code === status)).toBe(true);
    // Nothing more is queued for it, and nothing posted, however long.
    await event(u, 'Interested reply from Ed', 'Re: three');
    expect(await fanOut({ store, clock })).toBe(1);
    expect(await posts(u)).toHaveLength(2);
    const quiet = hits.length;
    clock.advance(3_600_000);
    await deliver();
    expect(hits.length).toBe(quiet);
    // The member sets a new URL: the reason goes, and the next event reaches it.
    await setUrl(u, secretPath(`new${status}`));
    expect((await readSettings(store.db, ws, u)).slackDisabledReason).toBeNull();
    await event(u, 'Interested reply from Flo', 'Re: four');
    expect(await fanOut({ store, clock })).toBe(1);
    expect(await deliver()).toEqual({ delivered: 1, retried: 0, failed: 0 });
    expect(got.at(-1)!.path).toBe(paths.get(u));
  });

  it('refuses the loopback receiver where private destinations are not allowed, at delivery as on save', async () => {
    const u = users[0]!;
    await event(u, 'Interested reply from Gus', 'Re: five');
    expect(await fanOut({ store, clock })).toBe(1);
    const before = hits.length;
    expect(await deliver(false)).toEqual({ delivered: 0, retried: 1, failed: 0 });
    expect(hits.length).toBe(before);
    expect((await posts(u)).at(-1)).toMatchObject({ state: 'pending', last_error: 'refused: 127.0.0.1 is a loopback or private address' });
    await expect(sealSlackUrl(vault(), { allowPrivate: false }, ws, u, `${base}${paths.get(u)}`)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('never writes a URL, or any secret part of one, to the log or a stored outcome', async () => {
    expect(logs.length).toBeGreaterThan(0);
    const text = logs.join('\n');
    expect(text).toContain('slack webhook gone: disabled');
    expect(text).toContain('slack notification failed');
    const stored = JSON.stringify(await store.db.selectFrom('notification_slack').select(['last_error']).execute()) + JSON.stringify(await store.db.selectFrom('notification_setting').select(['slack_disabled_reason', 'slack_host']).execute());
    for (const p of paths.values()) {
      expect(text).not.toContain(p);
      expect(stored).not.toContain(p);
      expect(text).not.toContain(p.split('/').at(-1));
    }
    expect(text).not.toContain('/services/');
  });
});
