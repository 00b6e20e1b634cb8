import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { graphError, graphErrors } from '../../sim/emulators/graph/errors.ts';
import { startGraphEmulator, type GraphEmulator } from '../../sim/emulators/graph/emulator.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../test/leaks.ts';
import { rawMessage } from '../../sim/emulators/messages.ts';
import { drain, messageIdOf } from '../../../test/sync/drain.ts';
import { GraphSync, type GraphSyncOptions } from './graph-sync.ts';
import { PushRegistry } from './push-registry.ts';
import { graphPushRoutes } from './push-routes.ts';

const REP = 'rep@contoso.test';
const PROSPECT = 'dana@prospect.test';
const DAY = 86_400_000;
const fastRetry = { maxAttempts: 4, baseDelayMs: 20, maxWaitMs: 3_000 };

let emu: GraphEmulator;
let handles: HandleCounts;
let seq = 0;

beforeEach(async () => {
  handles = handleCounts();
  emu = await startGraphEmulator({ users: [REP], push: { retryDelayMs: 10 } });
});
afterEach(async () => {
  await emu.close();
  await expectNoLeaks(handles);
});

function sync(over: Partial<GraphSyncOptions> = {}) {
  return new GraphSync({ baseUrl: emu.baseUrl, tokens: emu.tokenSource(REP), clock: systemClock, timeoutMs: 5_000, retry: fastRetry, ...over });
}

function mail(over: Partial<Parameters<typeof rawMessage>[0]> = {}) {
  return rawMessage({ from: PROSPECT, to: [REP], subject: 'Quick question', messageId: `<g-${++seq}@prospect.test>`, ...over });
}

const ids = (r: { batches: Array<{ messages: Array<{ raw: Uint8Array }> }> }) => r.batches.flatMap((b) => b.messages.map((m) => messageIdOf(m.raw)));

describe('Graph sync against the emulator', () => {
  it('first sync is a bounded delta round per folder (Inbox, Junk Email); later rounds yield only what changed', async () => {
    await emu.deliver(REP, mail({ messageId: '<old@p.test>' }), { receivedAt: Date.now() - 30 * DAY });
    const a = await emu.deliver(REP, mail({ messageId: '<a@p.test>' }));
    const junk = await emu.deliver(REP, mail({ messageId: '<junk@p.test>' }), { folder: 'junkemail' });
    const s = sync();
    expect(s.watch).toBeUndefined(); // without push configured the worker polls
    const first = await drain(s, null, { resyncWindowMs: 14 * DAY });
    expect(first.batches.every((b) => b.mode === 'resync')).toBe(true);
    expect(ids(first)).toEqual(['<a@p.test>', '<junk@p.test>']);
    const msgs = first.batches.flatMap((b) => b.messages);
    expect(msgs[0]).toMatchObject({ key: a.immutableId, folder: 'inbox', threadId: a.conversationId, receivedAt: Math.floor(a.receivedAt / 1000) * 1000 });
    expect(Buffer.from(msgs[0]!.raw).equals(a.raw)).toBe(true);
    expect(msgs[1]).toMatchObject({ key: junk.immutableId, folder: 'junk' });
    const folders = (first.committed as { folders: Record<string, string> }).folders;
    expect(Object.keys(folders).sort()).toEqual(['inbox', 'junkemail']);
    expect(folders.inbox).toContain('$deltatoken=');
    // The first call carried the window filter and $select.
    const firstDelta = emu.requests.find((r) => r.route === 'messages.delta')!;
    expect(decodeURIComponent(firstDelta.url)).toMatch(/\$filter=receivedDateTime ge \d{4}-.*Z/);
    expect(decodeURIComponent(firstDelta.url)).toContain('$select=id,internetMessageId,conversationId,receivedDateTime');

    // Nothing new: new deltaLinks, no messages.
    const idle = await drain(s, first.committed);
    expect(ids(idle)).toEqual([]);

    // A reply joins the conversation; a message moved from Junk Email to Inbox keeps its key.
    const reply = await emu.deliver(REP, mail({ subject: 'RE: Quick question', messageId: '<r@p.test>', inReplyTo: '<a@p.test>', references: ['<a@p.test>'] }));
    expect(reply.conversationId).toBe(a.conversationId);
    emu.mailbox(REP).move(junk, 'inbox', Date.now());
    const next = await drain(s, idle.committed);
    expect(next.batches.every((b) => b.mode === 'incremental')).toBe(true);
    const got = next.batches.flatMap((b) => b.messages);
    expect(got.map((m) => [messageIdOf(m.raw), m.folder, m.threadId])).toEqual([
      ['<r@p.test>', 'inbox', a.conversationId],
      ['<junk@p.test>', 'inbox', junk.conversationId],
    ]);
    expect(got[1]!.key).toBe(junk.immutableId);
  });

  it('pages with odata.maxpagesize; a batch cut mid-round stores the nextLink, and a crash replays only what was not committed', async () => {
    const s = sync({ pageSize: 2 });
    const start = await drain(s, null);
    for (let i = 0; i < 7; i++) await emu.deliver(REP, mail({ messageId: `<p${i}@p.test>` }));
    const crashed = await drain(s, start.committed, { batchSize: 2, crashAfter: 1 });
    expect(crashed.batches).toHaveLength(2);
    expect((crashed.committed as { folders: { inbox: string } }).folders.inbox).toContain('$skiptoken=');
    const after = await drain(s, crashed.committed, { batchSize: 2 });
    expect(ids(after)).toEqual(['<p2@p.test>', '<p3@p.test>', '<p4@p.test>', '<p5@p.test>', '<p6@p.test>']);
    expect(emu.requests.filter((r) => r.route === 'messages.delta' && /skiptoken/.test(r.url)).length).toBeGreaterThan(2);
    const prefer = emu.requests.filter((r) => r.route === 'messages.delta');
    expect(prefer.length).toBeGreaterThan(0);
  });

  it('410 syncStateNotFound on one folder: a bounded resync of that folder only; resyncRequired likewise', async () => {
    const s = sync();
    await emu.deliver(REP, mail({ messageId: '<seen@p.test>' }));
    await emu.deliver(REP, mail({ messageId: '<j@p.test>' }), { folder: 'junkemail' });
    const first = await drain(s, null);
    await emu.deliver(REP, mail({ messageId: '<missed@p.test>' }));
    emu.faults.inject('messages.delta', {
      kind: 'respond',
      ...graphError(410, 'syncStateNotFound', 'The sync state generation was not found.'),
    });
    const r = await drain(s, first.committed);
    expect(r.batches.map((b) => b.mode)).toEqual(['resync', 'incremental']);
    expect(ids(r)).toEqual(['<seen@p.test>', '<missed@p.test>']);
    expect(r.batches[0]!.messages.every((m) => m.folder === 'inbox')).toBe(true);

    // The emulator's own eviction (every token of the mailbox), answered resyncRequired.
    emu.expireDeltaTokens(REP, 'resyncRequired');
    await emu.deliver(REP, mail({ messageId: '<late@p.test>' }));
    const again = await drain(s, r.committed);
    expect(again.batches.map((b) => b.mode)).toEqual(['resync', 'resync']);
    expect(ids(again)).toEqual(['<seen@p.test>', '<missed@p.test>', '<late@p.test>', '<j@p.test>']);
    const gone = emu.requests.filter((x) => x.outcome === 410);
    expect(gone).toHaveLength(3);
    // From the fresh deltaLinks on, incremental again.
    expect((await drain(s, again.committed)).batches.every((b) => b.mode === 'incremental')).toBe(true);
  });

  it('a stored link to another host is never called with the token: the folder starts a bounded round again', async () => {
    const s = sync();
    await emu.deliver(REP, mail({ messageId: '<k@p.test>' }));
    const first = await drain(s, null);
    const folders = (first.committed as { folders: Record<string, string> }).folders;
    const r = await drain(s, { folders: { ...folders, inbox: 'http://127.0.0.2:1/v1.0/me/mailFolders/inbox/messages/delta?$deltatoken=x' } });
    expect(r.batches.map((b) => b.mode)).toEqual(['resync', 'incremental']);
    expect(ids(r)).toEqual(['<k@p.test>']);
    expect(emu.requests.every((x) => x.authorization?.startsWith('Bearer '))).toBe(true);
  });

  it('a message over the size limit is a problem; a message deleted before its MIME was read is skipped', async () => {
    const s = sync({ maxMessageBytes: 2_000, concurrency: 1 });
    const first = await drain(s, null);
    await emu.deliver(REP, mail({ messageId: '<gone@p.test>' }));
    const big = await emu.deliver(REP, mail({ messageId: '<big@p.test>', body: 'x'.repeat(5_000) }));
    await emu.deliver(REP, mail({ messageId: '<ok@p.test>' }));
    // The first $value (the message named first) answers 404, as if deleted meanwhile.
    emu.faults.inject('messages.value', { kind: 'respond', ...graphErrors.itemNotFound() });
    const r = await drain(s, first.committed);
    expect(ids(r)).toEqual(['<ok@p.test>']);
    expect(r.batches.flatMap((b) => b.problems)).toEqual([{ key: big.immutableId, folder: 'inbox', reason: expect.stringContaining('larger than 2000 bytes') }]);
    expect(emu.requests.filter((x) => x.route === 'messages.value')).toHaveLength(3);
  });

  it('429 with a decimal Retry-After is waited out; 503 and 504 retried; a long wait ends the pull with it', async () => {
    const s = sync();
    const first = await drain(s, null);
    await emu.deliver(REP, mail({ messageId: '<x@p.test>' }));
    emu.faults.inject('messages.delta', { kind: 'respond', ...graphErrors.tooManyRequests('0.6') });
    emu.faults.inject('messages.value', { kind: 'respond', ...graphErrors.serviceUnavailable() });
    emu.faults.inject('messages.value', { kind: 'respond', ...graphErrors.gatewayTimeout() });
    const t0 = Date.now();
    const r = await drain(s, first.committed);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(550);
    expect(ids(r)).toEqual(['<x@p.test>']);
    expect(emu.faults.pending()).toBe(0);

    emu.faults.inject('messages.delta', { kind: 'respond', ...graphErrors.tooManyRequests('120') });
    const err = await drain(s, r.committed).catch((e) => e);
    expect(isCadenzaError(err, 'MAILBOX_UNAVAILABLE')).toBe(true);
    expect(err.details).toMatchObject({ status: 429, code: 'TooManyRequests', retryAfterMs: 120_000 });
  });

  it('watch: subscriptions after the validation handshake; notifications call changed(); duplicates harmless, drops caught by the poll; lifecycle events', async () => {
    const registry = new PushRegistry();
    const api: FastifyInstance = Fastify();
    await api.register(graphPushRoutes, { registry });
    await api.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = `http://127.0.0.1:${(api.server.address() as { port: number }).port}/push/graph`;
      const s = sync({ push: { notificationUrl: url, registry, lifetimeMs: 2_400 } });
      const cursor = (await drain(s, null)).committed;
      let changes = 0;
      const failures: unknown[] = [];
      const h = await s.watch!(
        () => changes++,
        (e) => failures.push(e),
      );
      const subs = [...emu.subscriptions.all.values()];
      expect(subs.map((x) => x.resource).sort()).toEqual(["/me/mailFolders('inbox')/messages", "/me/mailFolders('junkemail')/messages"]);
      expect(subs[0]!.clientState).toHaveLength(43);

      await emu.deliver(REP, mail({ messageId: '<n1@p.test>' }));
      await emu.push.idle();
      expect(changes).toBe(1);
      emu.push.inject({ kind: 'duplicate' });
      await emu.deliver(REP, mail({ messageId: '<n2@p.test>' }), { folder: 'junkemail' });
      await emu.push.idle();
      expect(changes).toBe(3);
      emu.push.inject({ kind: 'drop' });
      await emu.deliver(REP, mail({ messageId: '<n3@p.test>' }));
      await emu.push.idle();
      expect(changes).toBe(3);
      expect(ids(await drain(s, cursor))).toEqual(['<n1@p.test>', '<n3@p.test>', '<n2@p.test>']);

      // A forged notification (wrong clientState) is acked and ignored.
      const forged = await api.inject({
        method: 'POST',
        url: '/push/graph',
        payload: { value: [{ subscriptionId: subs[0]!.id, clientState: 'guess', changeType: 'created', resource: 'x' }] },
      });
      expect(forged.statusCode).toBe(202);
      expect(changes).toBe(3);

      emu.subscriptions.lifecycle(subs[0]!.id, 'missed');
      await emu.push.idle();
      expect(changes).toBe(4);

      // Renewed at half the lifetime (1.2 s here).
      const exp = subs[0]!.expiration;
      await new Promise((r) => setTimeout(r, 1_400));
      expect(emu.requests.filter((r) => r.route === 'subscriptions.update')).toHaveLength(2);
      expect(subs[0]!.expiration).toBeGreaterThan(exp);

      // reauthorizationRequired: renewed at once.
      emu.subscriptions.lifecycle(subs[0]!.id, 'reauthorizationRequired');
      await emu.push.idle();
      for (let i = 0; i < 50 && emu.requests.filter((r) => r.route === 'subscriptions.update').length < 4; i++) await new Promise((r) => setTimeout(r, 10));
      expect(emu.requests.filter((r) => r.route === 'subscriptions.update')).toHaveLength(4);

      emu.subscriptions.lifecycle(subs[1]!.id, 'subscriptionRemoved');
      await emu.push.idle();
      expect(failures).toHaveLength(1);

      await h.close();
      expect(emu.requests.filter((r) => r.route === 'subscriptions.delete').map((r) => r.outcome)).toEqual([204]);
      expect(emu.subscriptions.all.size).toBe(0);
    } finally {
      await api.close();
    }
  });

  it('a notification URL that does not echo the validation token gets no subscription', async () => {
    const bad: FastifyInstance = Fastify();
    bad.post('/hook', async () => 'nope');
    await bad.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = `http://127.0.0.1:${(bad.server.address() as { port: number }).port}/hook`;
      const s = sync({ push: { notificationUrl: url, registry: new PushRegistry() } });
      const err = await s.watch!(() => undefined, () => undefined).catch((e) => e);
      expect(err.details).toMatchObject({ status: 400, code: 'ValidationError' });
      expect(emu.subscriptions.all.size).toBe(0);
    } finally {
      await bad.close();
    }
  });

  it('the emulator refuses a lifetime beyond its cap', async () => {
    const registry = new PushRegistry();
    const api = Fastify();
    await api.register(graphPushRoutes, { registry });
    await api.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = `http://127.0.0.1:${(api.server.address() as { port: number }).port}/push/graph`;
      const err = await sync({ push: { notificationUrl: url, registry, lifetimeMs: 5_000 * 60_000 } })
        .watch!(() => undefined, () => undefined)
        .catch((e) => e);
      expect(err.message).toContain('4230 minutes');
    } finally {
      await api.close();
    }
  });
});

describe('Graph push route', () => {
  it('echoes the URL-decoded validation token as text/plain; refuses a body without value; routes by clientState', async () => {
    const registry = new PushRegistry();
    const app = Fastify();
    await app.register(graphPushRoutes, { registry });
    const token = 'Validation: Testing client application at 2026-11-29T10:00:00Z & more';
    const v = await app.inject({ method: 'POST', url: `/push/graph?validationToken=${encodeURIComponent(token)}`, headers: { 'content-type': 'text/plain' }, payload: '' });
    expect([v.statusCode, v.headers['content-type'], v.body]).toEqual([200, 'text/plain; charset=utf-8', token]);
    expect((await app.inject({ method: 'POST', url: '/push/graph', payload: { nothing: true } })).statusCode).toBe(400);
    const seen: string[] = [];
    const w = registry.watchGraph('secret', { changed: () => seen.push('changed'), lifecycle: (e) => seen.push(e) });
    w.subscribed('sub-1');
    const post = (items: unknown[]) => app.inject({ method: 'POST', url: '/push/graph', payload: { value: items } });
    expect((await post([{ subscriptionId: 'sub-1', clientState: 'secret' }, { subscriptionId: 'sub-2', clientState: 'secret' }])).statusCode).toBe(202);
    expect((await post([{ subscriptionId: 'sub-1', clientState: 'secret', lifecycleEvent: 'missed' }])).statusCode).toBe(202);
    expect(seen).toEqual(['changed', 'missed']);
    await app.close();
  });
});
