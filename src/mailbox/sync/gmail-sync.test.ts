import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { gmailErrors } from '../../sim/emulators/gmail/errors.ts';
import { startGmailEmulator, type GmailEmulator } from '../../sim/emulators/gmail/emulator.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../test/leaks.ts';
import { rawMessage } from '../../sim/emulators/messages.ts';
import { drain, messageIdOf } from '../../../test/sync/drain.ts';
import { GmailSync, type GmailSyncOptions } from './gmail-sync.ts';
import { PushRegistry } from './push-registry.ts';
import { gmailPushRoutes } from './push-routes.ts';

const REP = 'rep@acme.test';
const PROSPECT = 'dana@prospect.test';
const DAY = 86_400_000;
const fastRetry = { maxAttempts: 4, baseDelayMs: 20, maxWaitMs: 3_000 };

let emu: GmailEmulator;
let handles: HandleCounts;
let seq = 0;

beforeEach(async () => {
  handles = handleCounts();
  emu = await startGmailEmulator({ users: [REP, PROSPECT], pushMinIntervalMs: 0, push: { retryDelayMs: 10 } });
});
afterEach(async () => {
  await emu.close();
  await expectNoLeaks(handles);
});

function sync(over: Partial<GmailSyncOptions> = {}) {
  return new GmailSync({ baseUrl: emu.baseUrl, tokens: emu.tokenSource(REP), clock: systemClock, timeoutMs: 5_000, retry: fastRetry, ...over });
}

function mail(over: Partial<Parameters<typeof rawMessage>[0]> = {}) {
  return rawMessage({ from: PROSPECT, to: [REP], subject: 'Quick question', messageId: `<in-${++seq}@prospect.test>`, ...over });
}

const ids = (b: { batches: Array<{ messages: Array<{ raw: Uint8Array }> }> }) => b.batches.flatMap((x) => x.messages.map((m) => messageIdOf(m.raw)));

describe('Gmail sync against the emulator', () => {
  it('first sync scans the window in INBOX and SPAM, stores the profile historyId; then history yields only what is new', async () => {
    await emu.deliver(REP, mail({ messageId: '<old@p.test>' }), { internalDate: Date.now() - 10 * DAY });
    const a = await emu.deliver(REP, mail({ messageId: '<a@p.test>' }));
    const spam = await emu.deliver(REP, mail({ messageId: '<spam@p.test>' }), { spam: true });
    const s = sync();
    expect(s.watch).toBeUndefined(); // without push configured the worker polls
    const first = await drain(s, null, { resyncWindowMs: 7 * DAY });
    expect(first.batches.every((b) => b.mode === 'resync')).toBe(true);
    expect(ids(first).sort()).toEqual(['<a@p.test>', '<spam@p.test>']);
    const byKey = new Map(first.batches.flatMap((b) => b.messages).map((m) => [m.key, m]));
    expect(byKey.get(a.id)).toMatchObject({ folder: 'inbox', threadId: a.threadId, receivedAt: a.internalDate });
    expect(byKey.get(spam.id)?.folder).toBe('junk');
    expect(Buffer.from(byKey.get(a.id)!.raw).equals(a.raw)).toBe(true);
    expect(first.committed).toEqual({ historyId: String(emu.mailbox(REP).historyId) });

    // Nothing new: nothing yielded, the cursor stays.
    expect((await drain(s, first.committed)).batches).toEqual([]);

    // A reply to `a` (References) joins its thread; our own sent mail is not yielded.
    const t = emu.tokenSource(REP);
    const out = rawMessage({ from: REP, to: [PROSPECT], subject: 'Other', messageId: '<ours@acme.test>' }).toString('base64url');
    await fetch(`${emu.baseUrl}/gmail/v1/users/me/messages/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await t({ forceRefresh: false })}`, 'content-type': 'application/json' },
      body: JSON.stringify({ raw: out }),
    });
    const reply = await emu.deliver(REP, mail({ subject: 'Re: Quick question', messageId: '<r@p.test>', inReplyTo: '<a@p.test>', references: ['<a@p.test>'] }));
    expect(reply.threadId).toBe(a.threadId);
    const next = await drain(s, first.committed);
    expect(next.batches.map((b) => b.mode)).toEqual(['incremental']);
    expect(ids(next)).toEqual(['<r@p.test>']);
    expect(next.batches[0]!.messages[0]!.threadId).toBe(a.threadId);
    expect(next.committed).toEqual({ historyId: String(emu.mailbox(REP).historyId) });
  });

  it('pages history and cuts batches; a crash before committing a batch replays it and loses nothing', async () => {
    const s = sync({ pageSize: 2 });
    const start = await drain(s, null);
    for (let i = 0; i < 7; i++) await emu.deliver(REP, mail({ messageId: `<p${i}@p.test>` }));
    const crashed = await drain(s, start.committed, { batchSize: 2, crashAfter: 1 });
    expect(crashed.batches).toHaveLength(2);
    const after = await drain(s, crashed.committed, { batchSize: 2 });
    const seen = new Set([...ids(crashed), ...ids(after)]);
    expect([...seen].sort()).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `<p${i}@p.test>`));
    // The uncommitted second batch came again.
    expect(ids(after)).toEqual(expect.arrayContaining(ids({ batches: [crashed.batches[1]!] })));
    expect(emu.requests.filter((r) => r.route === 'history.list').length).toBeGreaterThan(3);
  });

  it('history 404 (expired id) falls back to a bounded resync marked as such, with the profile id taken before the scan', async () => {
    const s = sync();
    await emu.deliver(REP, mail({ messageId: '<seen@p.test>' }));
    const first = await drain(s, null);
    await emu.deliver(REP, mail({ messageId: '<missed@p.test>' }));
    emu.expireHistory(REP);
    const resync = await drain(s, first.committed, { batchSize: 1 });
    expect(resync.batches.every((b) => b.mode === 'resync')).toBe(true);
    // Both come (the worker deduplicates the one it saw by Message-ID); intermediate cursors restart the scan.
    expect(ids(resync).sort()).toEqual(['<missed@p.test>', '<seen@p.test>']);
    expect(resync.batches[0]!.cursor).toEqual({ historyId: null });
    expect(resync.committed).toEqual({ historyId: String(emu.mailbox(REP).historyId) });
    const history404 = emu.requests.find((r) => r.route === 'history.list');
    expect(history404?.outcome).toBe(404);
    // The route log shows the order: profile before the list.
    const order = emu.requests.map((r) => r.route).filter((r) => r === 'getProfile' || r === 'messages.list');
    expect(order.slice(-3)).toEqual(['getProfile', 'messages.list', 'messages.list']);
    // Back to incremental from there.
    await emu.deliver(REP, mail({ messageId: '<after@p.test>' }));
    const next = await drain(s, resync.committed);
    expect(next.batches.map((b) => [b.mode, ids({ batches: [b] })])).toEqual([['incremental', ['<after@p.test>']]]);
  });

  it('a message over the size limit is a problem, not a crash; the others still come', async () => {
    const s = sync({ maxMessageBytes: 2_000 });
    const first = await drain(s, null);
    const big = await emu.deliver(REP, mail({ messageId: '<big@p.test>', body: 'x'.repeat(5_000) }));
    await emu.deliver(REP, mail({ messageId: '<small@p.test>' }));
    const r = await drain(s, first.committed);
    expect(ids(r)).toEqual(['<small@p.test>']);
    expect(r.batches.flatMap((b) => b.problems)).toEqual([{ key: big.id, folder: 'inbox', reason: expect.stringContaining('larger than 2000 bytes') }]);
    expect(emu.requests.filter((x) => x.route === 'messages.get')).toHaveLength(2); // not retried
  });

  it('the watch is renewed on schedule, and a failed renewal reaches failed()', async () => {
    const registry = new PushRegistry();
    emu.pubsub.createTopic('projects/cadenza/topics/gmail');
    const s = sync({ push: { topicName: 'projects/cadenza/topics/gmail', registry, renewEveryMs: 1_000 } });
    const failures: unknown[] = [];
    const h = await s.watch!(() => undefined, (e) => failures.push(e));
    emu.faults.inject('watch', { kind: 'respond', ...gmailErrors.insufficientPermissions() });
    await new Promise((r) => setTimeout(r, 1_200));
    expect(emu.requests.filter((r) => r.route === 'watch').map((r) => r.outcome)).toEqual([200, 403]);
    expect(failures).toHaveLength(1);
    expect(isCadenzaError(failures[0], 'MAILBOX_UNAVAILABLE')).toBe(true);
    await h.close();
  });

  it('retention by age: history older than historyRetentionMs is gone', async () => {
    let now = Date.UTC(2026, 10, 1);
    const clock = { ...systemClock, now: () => now };
    await emu.close();
    emu = await startGmailEmulator({ users: [REP], clock, historyRetentionMs: 3 * DAY });
    const s = sync({ clock });
    const first = await drain(s, null);
    await emu.deliver(REP, mail());
    now += 4 * DAY;
    await emu.deliver(REP, mail());
    const r = await drain(s, first.committed);
    expect(r.batches.every((b) => b.mode === 'resync')).toBe(true);
  });

  it('429 with Retry-After is waited out; 5xx retried; a wait past the bound ends the pull with the wait in the error', async () => {
    const s = sync();
    const first = await drain(s, null);
    await emu.deliver(REP, mail({ messageId: '<x@p.test>' }));
    emu.faults.inject('history.list', { kind: 'respond', ...gmailErrors.tooManyConcurrent(1) });
    emu.faults.inject('messages.get', { kind: 'respond', ...gmailErrors.backendError(503) });
    const t0 = Date.now();
    const r = await drain(s, first.committed);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(ids(r)).toEqual(['<x@p.test>']);
    expect(emu.faults.pending()).toBe(0);

    emu.faults.inject('history.list', { kind: 'respond', ...gmailErrors.tooManyConcurrent(3600) });
    const err = await drain(s, r.committed).catch((e) => e);
    expect(isCadenzaError(err, 'MAILBOX_UNAVAILABLE')).toBe(true);
    expect(err.details).toMatchObject({ status: 429, code: 'rateLimitExceeded', retryAfterMs: 3_600_000 });

    // An abort ends a Retry-After wait at once.
    emu.faults.inject('history.list', { kind: 'respond', ...gmailErrors.tooManyConcurrent(2) });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const t1 = Date.now();
    const aborted = await drain(s, r.committed, { signal: ac.signal }).catch((e) => e);
    expect(aborted.details?.aborted).toBe(true);
    expect(Date.now() - t1).toBeLessThan(1_500);
  });

  it('watch: Pub/Sub pushes reach changed() through the push route; duplicates are harmless, a dropped one is caught by the next poll', async () => {
    const registry = new PushRegistry();
    const api: FastifyInstance = Fastify();
    await api.register(gmailPushRoutes, { registry, verificationToken: 's3cret' });
    await api.listen({ host: '127.0.0.1', port: 0 });
    try {
      const port = (api.server.address() as { port: number }).port;
      emu.pubsub.createPushSubscription({
        topic: 'projects/cadenza/topics/gmail',
        name: 'projects/cadenza/subscriptions/gmail-push',
        pushEndpoint: `http://127.0.0.1:${port}/push/gmail?token=s3cret`,
      });
      const s = sync({ push: { topicName: 'projects/cadenza/topics/gmail', registry } });
      const cursor = (await drain(s, null)).committed;
      let changes = 0;
      const h = await s.watch!(() => changes++, (e) => {
        throw e;
      });
      await emu.push.idle();
      expect(changes).toBe(1); // watch publishes once at once

      emu.push.inject({ kind: 'duplicate' });
      await emu.deliver(REP, mail({ messageId: '<d@p.test>' }));
      await emu.push.idle();
      expect(changes).toBe(3);

      emu.push.inject({ kind: 'drop' });
      await emu.deliver(REP, mail({ messageId: '<dropped@p.test>' }));
      await emu.push.idle();
      expect(changes).toBe(3);
      // The reconciliation poll pulls from the cursor anyway.
      expect(ids(await drain(s, cursor))).toEqual(['<d@p.test>', '<dropped@p.test>']);

      emu.push.inject({ kind: 'delay', ms: 150 });
      await emu.deliver(REP, mail());
      expect(changes).toBe(3);
      await emu.push.idle();
      expect(changes).toBe(4);
      // Our own SENT mail does not trigger (the watch is on INBOX and SPAM).
      await emu.deliver(PROSPECT, mail({ from: REP, to: [PROSPECT] }));
      await emu.push.idle();
      expect(changes).toBe(4);

      // Closing stops listening but leaves Gmail's one watch per mailbox to whoever watches next.
      await h.close();
      await emu.deliver(REP, mail());
      await emu.push.idle();
      expect(changes).toBe(4);
      expect(emu.push.log.at(-1)?.attempts).toEqual([204]);
      // Disconnecting the mailbox stops it.
      await s.stopPush();
      expect(emu.requests.at(-1)?.route).toBe('stop');
      const pushed = emu.push.log.length;
      await emu.deliver(REP, mail());
      await emu.push.idle();
      expect(emu.push.log).toHaveLength(pushed);
      expect(emu.push.log.every((p) => p.fault === 'drop' || p.attempts.every((a) => a === 204))).toBe(true);
    } finally {
      await api.close();
    }
  });
});

describe('Gmail push route', () => {
  it('acks unknown mailboxes, refuses unreadable bodies and a wrong token, and only calls changed()', async () => {
    const registry = new PushRegistry();
    const app = Fastify();
    await app.register(gmailPushRoutes, { registry, verificationToken: 'tok' });
    let n = 0;
    const off = registry.watchGmail('Rep@Acme.test', () => n++);
    const push = (data: unknown, token = 'tok') =>
      app.inject({
        method: 'POST',
        url: `/push/gmail?token=${token}`,
        payload: { message: { data: Buffer.from(JSON.stringify(data)).toString('base64url'), messageId: '1', publishTime: 'x' }, subscription: 's' },
      });
    expect((await push({ emailAddress: 'rep@acme.test', historyId: '99' })).statusCode).toBe(204);
    expect(n).toBe(1);
    expect((await push({ emailAddress: 'rep@acme.test', historyId: 99 }, 'bad')).statusCode).toBe(403);
    expect((await push({ emailAddress: 'other@acme.test', historyId: '1' })).statusCode).toBe(204);
    expect((await push({ historyId: '1' })).statusCode).toBe(400);
    expect((await app.inject({ method: 'POST', url: '/push/gmail?token=tok', payload: { message: { data: '!!notjson' } } })).statusCode).toBe(400);
    expect(n).toBe(1);
    off();
    expect((await push({ emailAddress: 'rep@acme.test', historyId: '100' })).statusCode).toBe(204);
    expect(n).toBe(1);
    await app.close();
  });
});
