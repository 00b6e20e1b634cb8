/**
 * Two Cadenza installations on loopback, each with its own store (PGlite), master key and HTTP
 * server (the real api/server.ts with the federation's signed ends) on an ephemeral port, and one
 * warmup member each on the mail bed. They peer (opt-in on both sides: one side alone gets
 * nothing), exchange members, schedule and placement over signed HTTP, send each other warmup mail
 * through real SMTP (Postfix), read it through real IMAP (Dovecot), recognise it with the pair key
 * neither side sent, reply, and report placement back; then one side leaves and the other stops at
 * once; a non-peer's request and a tampered one are refused.
 *
 * Both members are on the bed's one domain, which the planner never pairs: the plan step checks
 * that the peer's member enters the local pool as a receiver with its offered capacity, and the
 * day's sends are then written as the planner's output is stored (as warmup-send.mail.test.ts does).
 * Mail-bed users: sync84 (installation A), sync85 (installation B).
 */
import { randomBytes } from 'node:crypto';
import PostalMime from 'postal-mime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildServer } from '../../api/server.ts';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { createConnector } from '../../mailbox/connectors/registry.ts';
import type { Transport } from '../../mailbox/connectors/connector.ts';
import type { FetchedMessage } from '../../mailbox/sync/source.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, readInbox, resetMailBed } from '../../../test/mail/mailbed.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { setWarmup } from '../membership.ts';
import { placementCounts } from '../placement/evaluate.ts';
import { assemblePool } from '../plan-role.ts';
import { writeDayPlan } from '../plan-store.ts';
import { warmupRecogniser } from '../receive/recogniser.ts';
import { sendDueWarmup } from '../send/warmup-sender.ts';
import { warmupPoolKey } from '../text/marker.ts';
import { callPeer } from './client.ts';
import { exchangeWith, sendLeave } from './federation-role.ts';
import { federationIdentity, pairKey, type FederationIdentity } from './identity.ts';
import { addPeer, endPeering, listPeers, type Peer } from './peers.ts';
import { signRequest } from './signing.ts';
import { EXCHANGE_PATH, FEDERATION_TYPE } from './wire.ts';

const PASS = 'pass';
const pacing = { dayStart: '00:30', dayEnd: '23:30', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [1, 1] };
const noonZone = (() => {
  const k = 12 - new Date().getUTCHours();
  return k === 0 ? 'UTC' : k > 0 ? `Etc/GMT-${k}` : `Etc/GMT+${-k}`;
})();

interface Installation {
  name: string;
  email: string;
  mailboxId: string;
  workspaceId: string;
  store: TestStore;
  master: Buffer;
  identity: FederationIdentity;
  server: FastifyInstance;
  transport: Transport;
}

describeMailBed('warmup federation: two installations on loopback', () => {
  let skew = 0;
  const clock = { ...systemClock, now: () => Date.now() + skew };
  const random = seededRandom(84);
  const closers: Array<() => Promise<void>> = [];
  let A: Installation;
  let B: Installation;

  async function install(name: string, email: string, displayName: string): Promise<Installation> {
    const store = await freshStore('pglite');
    closers.push(() => store.destroy());
    const workspaceId = '00000000-0000-7000-8000-' + randomBytes(6).toString('hex');
    const mailboxId = '00000000-0000-7000-8001-' + randomBytes(6).toString('hex');
    await store.db.insertInto('workspace').values({ id: workspaceId, name, time_zone: 'UTC' }).execute();
    const settings = { smtp: bedEndpoint('smtp', 'none'), imap: bedEndpoint('imap'), serverSavesSent: false, pacing };
    await store.db.insertInto('mailbox').values({ id: mailboxId, workspace_id: workspaceId, email, display_name: displayName, provider: 'smtp_imap', settings: JSON.stringify(settings), time_zone: noonZone }).execute();
    await setWarmup(store.db, workspaceId, mailboxId, { enabled: true, target: 4 }, clock.now());
    const master = randomBytes(32);
    // The card's URL is the server's once it listens on its ephemeral port.
    const identity = federationIdentity(master, 'http://127.0.0.1', name);
    const server = buildServer({ store, clock, version: 'test', federation: { random, identity } });
    identity.card.url = await server.listen({ host: '127.0.0.1', port: 0 });
    closers.push(() => server.close());
    const transport: Transport = createConnector({ id: mailboxId, email, provider: 'smtp_imap', settings }, { clock, random, credential: { kind: 'password', username: email, password: PASS } }, ['send']);
    closers.push(() => transport.close());
    return { name, email, mailboxId, workspaceId, store, master, identity, server, transport };
  }

  const fed = (x: Installation) => ({ store: x.store, clock, identity: x.identity });
  const peerAt = async (x: Installation): Promise<Peer> => (await listPeers(x.store.db, x.workspaceId)).at(-1)!;
  const send = (x: Installation) => sendDueWarmup({ store: x.store, clock, transport: x.transport, keyFor: (pool, peer) => (peer ? pairKey(x.identity, peer) : warmupPoolKey(x.master, pool)) }, x.mailboxId);
  const row = (x: Installation, messageId: string) => x.store.db.selectFrom('warmup_mail').selectAll().where('message_id', '=', messageId).executeTakeFirst();

  /** x's sync: pulls its inbox and hands the batch to the recogniser, as the pipeline does; the indexes it takes are hidden from every user view. */
  async function receive(x: Installation, messageId: string): Promise<{ taken: boolean }> {
    const c = createConnector({ id: x.mailboxId, email: x.email, provider: 'smtp_imap', settings: { imap: bedEndpoint('imap') } }, { clock, random, credential: { kind: 'password', username: x.email, password: PASS } }, ['sync', 'folders']);
    closers.push(() => c.close());
    const all: FetchedMessage[] = [];
    for await (const batch of c.pull(null, { resyncWindowMs: 3_600_000 })) all.push(...batch.messages);
    const mine = all.filter((m) => Buffer.from(m.raw).toString('latin1').includes(messageId));
    expect(mine).toHaveLength(1);
    const from = (await PostalMime.parse(mine[0]!.raw)).from?.address ?? null;
    const rec = warmupRecogniser({ db: x.store.db, master: x.master, clock, random, federation: x.identity, reply: { share: 1, minDelayMs: 0, maxDelayMs: 1 } });
    const taken = await rec.take({ id: x.mailboxId, workspaceId: x.workspaceId }, [{ fetched: mine[0]!, from }], c);
    return { taken: taken.has(0) };
  }

  async function plan(x: Installation, to: Installation): Promise<string> {
    const peer = await peerAt(x);
    const [id] = await writeDayPlan(x.store.db, 'default', [{ sender: x.mailboxId, receiver: to.email, at: clock.now() - 1000 }], new Map([[x.mailboxId, { address: x.email, mailboxId: x.mailboxId }], [to.email, { address: to.email, mailboxId: null, peerId: peer.id }]]), random);
    return (await x.store.db.selectFrom('warmup_mail').select('message_id').where('id', '=', id!).executeTakeFirstOrThrow()).message_id;
  }

  beforeAll(async () => {
    await resetMailBed(['sync84@inbox.test', 'sync85@inbox.test']);
    A = await install('Installation A', 'sync84@inbox.test', 'Anna Berg');
    B = await install('Installation B', 'sync85@inbox.test', 'Ben Ode');
  }, 180_000);
  afterAll(async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  });

  it('peer, exchange, send both ways through SMTP, recognise, reply, report placement; then leave', async () => {
    // The card is public.
    expect(await (await fetch(`${B.identity.card.url}/federation/card`)).json()).toEqual(B.identity.card);

    // Opt-in on both sides: A alone adds B, and B refuses A's exchange; A stays pending.
    await addPeer(A.store.db, A.workspaceId, B.identity.card, A.identity.card, { now: clock.now(), random });
    const lonely = await exchangeWith(fed(A), await peerAt(A));
    expect(lonely).toMatchObject({ ok: false, ended: false, error: expect.stringContaining('not added you') });
    expect(await peerAt(A)).toMatchObject({ state: 'pending', failures: 1 });
    expect(await B.store.db.selectFrom('warmup_remote_member').selectAll().execute()).toEqual([]);

    // B adds A: B's first exchange makes the peering active on both sides and swaps the members.
    await addPeer(B.store.db, B.workspaceId, A.identity.card, B.identity.card, { now: clock.now(), random });
    expect(await exchangeWith(fed(B), await peerAt(B))).toMatchObject({ ok: true, members: 1 });
    expect(await peerAt(A)).toMatchObject({ state: 'active' });
    expect(await peerAt(B)).toMatchObject({ state: 'active' });
    expect(await A.store.db.selectFrom('warmup_remote_member').select(['address', 'capacity', 'domain']).execute()).toEqual([{ address: B.email, capacity: 6, domain: 'inbox.test' }]);

    // Plan: B's member is in A's pool as a receiver only, up to the capacity it offered.
    const pool = await assemblePool(A.store, 'default', clock.now());
    expect(pool.find((m) => m.id === B.email)).toMatchObject({ canSend: false, receiveLimit: 6, workspace: `peer:${(await peerAt(A)).id}` });
    const toB = await plan(A, B);
    const toA = await plan(B, A);

    // Not sent before the peer accepted it into its schedule.
    expect(await send(A)).toEqual({ kind: 'idle' });
    expect(await exchangeWith(fed(A), await peerAt(A))).toMatchObject({ ok: true, accepted: 1, refused: 0 });
    expect(await exchangeWith(fed(B), await peerAt(B))).toMatchObject({ ok: true, accepted: 1, refused: 0 });
    expect(await row(B, toB)).toMatchObject({ sender_mailbox_id: null, receiver_mailbox_id: B.mailboxId, received_folder: null });

    // Sent through Postfix, each once.
    expect(await send(A)).toMatchObject({ kind: 'sent', messageId: toB });
    expect(await send(B)).toMatchObject({ kind: 'sent', messageId: toA });
    expect(await send(A)).toEqual({ kind: 'idle' });
    expect(await readInbox(B.email, PASS, toB)).toHaveLength(1);
    expect(await readInbox(A.email, PASS, toA)).toHaveLength(1);

    // Each side recognises the other's mail with the pair key (taken aside: hidden from user views) and plans a reply.
    expect(await receive(B, toB)).toEqual({ taken: true });
    expect(await receive(A, toA)).toEqual({ taken: true });
    expect(await row(B, toB)).toMatchObject({ received_folder: 'inbox' });
    const replyAtB = await B.store.db.selectFrom('warmup_mail').selectAll().where('in_reply_to', '=', toB).executeTakeFirstOrThrow();
    expect(replyAtB).toMatchObject({ kind: 'reply', sender_mailbox_id: B.mailboxId, receiver_address: A.email, peer_id: (await peerAt(B)).id });

    // B's reply goes back through B's own sender (after its minimum gap), and A recognises it in thread.
    skew = 61_000;
    expect(await send(B)).toMatchObject({ kind: 'sent', messageId: replyAtB.message_id });
    expect(await readInbox(A.email, PASS, replyAtB.message_id)).toHaveLength(1);
    expect(await receive(A, replyAtB.message_id)).toEqual({ taken: true });

    // Placement flows back: one exchange from A carries A's reports to B and brings B's to A.
    expect((await placementCounts(A.store.db, A.mailboxId, clock.now() + 1000)).inbox7).toBe(0);
    expect(await exchangeWith(fed(A), await peerAt(A))).toMatchObject({ ok: true });
    expect(await row(A, toB)).toMatchObject({ received_folder: 'inbox' });
    expect((await placementCounts(A.store.db, A.mailboxId, clock.now() + 1000)).inbox7).toBe(1);
    expect((await placementCounts(B.store.db, B.mailboxId, clock.now() + 1000)).inbox7).toBe(2); // its first mail and its reply
    expect(await row(B, toB)).toMatchObject({ reported_at: expect.any(Date) });

    // A non-peer's request is refused, and so is a tampered one of A's.
    const C = federationIdentity(randomBytes(32), 'http://127.0.0.1:9', 'C');
    expect(await callPeer(C, B.identity.card, EXCHANGE_PATH, { members: [], schedule: [], reports: [] }, clock.now)).toMatchObject({ ok: false, kind: 'refused', status: 403, reason: 'unknown-peer' });
    const body = Buffer.from(JSON.stringify({ members: [], schedule: [], reports: [] }));
    const headers = signRequest(A.identity, B.identity.card.signKey, { method: 'POST', path: EXCHANGE_PATH, body }, clock.now());
    const tampered = await fetch(B.identity.card.url + EXCHANGE_PATH, { method: 'POST', headers: { ...headers, 'content-type': FEDERATION_TYPE }, body: Buffer.from(JSON.stringify({ members: [], schedule: [], reports: [] }) + ' ') });
    expect(tampered.status).toBe(401);
    expect(await tampered.json()).toMatchObject({ error: { details: { reason: 'bad-signature' } } });
    // A well-formed but hostile body from the peer is answered with the field, not a crash.
    const bad = Buffer.from(JSON.stringify({ members: [{ address: 'x', provider: 'g', domain: 'd', timeZone: 'UTC', dayStart: '09:00', dayEnd: '17:00', capacity: 1 }], schedule: [], reports: [] }));
    const h2 = signRequest(A.identity, B.identity.card.signKey, { method: 'POST', path: EXCHANGE_PATH, body: bad }, clock.now());
    const res = await fetch(B.identity.card.url + EXCHANGE_PATH, { method: 'POST', headers: { ...h2, 'content-type': FEDERATION_TYPE }, body: bad });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'INVALID_INPUT', message: expect.stringContaining('members.0.address') } });

    // More planned mail both ways, not yet sent; then B leaves.
    const laterToB = await plan(A, B);
    const laterToA = await plan(B, A);
    expect(await exchangeWith(fed(A), await peerAt(A))).toMatchObject({ ok: true, accepted: 1 });
    const peerAtB = await peerAt(B);
    expect(await endPeering(B.store.db, peerAtB.id, 'us', clock.now())).toBe(true);
    // At once on B's side: its planned mail to A is cancelled and nothing goes.
    expect(await row(B, laterToA)).toBeUndefined();
    skew = 200_000;
    expect(await send(B)).toEqual({ kind: 'idle' });
    // The notice reaches A: it stops at once too, and its accepted mail to B is cancelled.
    expect(await sendLeave(fed(B), peerAtB)).toBe(true);
    expect(await peerAt(A)).toMatchObject({ state: 'left', leftBy: 'peer' });
    expect(await row(A, laterToB)).toBeUndefined();
    expect(await send(A)).toEqual({ kind: 'idle' });
    // B refuses A's requests from now on; A, which has left too, does not call.
    expect(await callPeer(A.identity, B.identity.card, EXCHANGE_PATH, { members: [], schedule: [], reports: [] }, clock.now)).toMatchObject({ ok: false, status: 403, reason: 'peer-left' });
    expect(await assemblePool(A.store, 'default', clock.now())).toEqual([expect.objectContaining({ id: A.mailboxId })]);
  }, 120_000);

  it('a peer that is down is retried with back-off and blocks nothing', async () => {
    const D = federationIdentity(randomBytes(32), 'http://127.0.0.1:9', 'Down');
    await addPeer(A.store.db, A.workspaceId, D.card, A.identity.card, { now: clock.now(), random });
    const peer = await peerAt(A);
    const t0 = clock.now();
    expect(await exchangeWith(fed(A), peer)).toMatchObject({ ok: false, ended: false, error: expect.stringContaining('could not reach') });
    const after = (await peerAt(A)).retryAt!.getTime();
    expect(after - t0).toBeGreaterThanOrEqual(30_000);
    expect(await exchangeWith(fed(A), await peerAt(A))).toMatchObject({ ok: false });
    expect((await peerAt(A)).retryAt!.getTime() - clock.now()).toBeGreaterThanOrEqual(59_000);
  });
});
