import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import { seedSentSequence, type Seeded } from '../../../test/ingest/seed-sent-sequence.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { checkEndpointUrl, isPrivateAddress } from './destination.ts';
import { WebhookDispatcher } from './dispatcher.ts';
import { createEndpoint, listDeliveries, queueTestEvent, webhookEvents } from './endpoints.ts';
import { sign, signatureHeader, verify } from './signature.ts';

/** A loopback receiver: records each POST with its raw body and answers from the script of its `?k=` (then 200). */
async function receiver() {
  const app: FastifyInstance = Fastify();
  const got: Array<{ k: string; headers: Record<string, string | string[] | undefined>; body: string; at: number }> = [];
  const scripts = new Map<string, number[]>();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_r, b, done) => done(null, b));
  app.post('/hook', async (req, reply) => {
    const k = (req.query as { k?: string }).k ?? '';
    got.push({ k, headers: req.headers, body: req.body as string, at: Date.now() });
    return reply.code(scripts.get(k)?.shift() ?? 200).send('ok');
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/hook`;
  return { app, got, scripts, url };
}

async function until<T>(f: () => Promise<T | undefined | false>, what: string, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('webhook signatures and destinations', () => {
  it('signs t.body with HMAC-SHA256; a receiver refuses a changed body, another secret and an old timestamp', () => {
    const body = '{"id":"event:1","type":"reply"}';
    const now = 1_790_000_000_000;
    const h = sign('whsec_a', body, now / 1000);
    expect(h).toMatch(/^t=1790000000,v1=[0-9a-f]{64}$/);
    expect(verify(h, body, 'whsec_a', now)).toEqual({ ok: true, timestamp: 1_790_000_000 });
    expect(verify(h, body.replace('reply', 'bounce'), 'whsec_a', now)).toMatchObject({ ok: false, why: 'mismatch' });
    expect(verify(h, body, 'whsec_b', now)).toMatchObject({ ok: false, why: 'mismatch' });
    expect(verify(h, body, 'whsec_a', now + 301_000)).toMatchObject({ ok: false, why: 'too_old' });
    expect(verify('v1=abc', body, 'whsec_a', now)).toMatchObject({ ok: false, why: 'malformed' });
    // While a secret rotates, a second v1 may be present: either matching is enough.
    expect(verify(`${h},v1=${'0'.repeat(64)}`, body, 'whsec_a', now).ok).toBe(true);
  });

  it('refuses loopback, private, link-local and metadata addresses unless private destinations are allowed', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(a), a).toBe(false);
    const refused = (u: string) => {
      try {
        checkEndpointUrl(u, { allowPrivate: false });
        return false;
      } catch (e) {
        return isCadenzaError(e, 'INVALID_INPUT');
      }
    };
    for (const u of ['http://example.com/hook', 'https://127.0.0.1/hook', 'https://localhost/hook', 'https://[::1]/hook', 'https://169.254.169.254/latest', 'https://u:p@example.com/', 'ftp://example.com/']) {
      expect(refused(u), u).toBe(true);
    }
    expect(checkEndpointUrl('https://hooks.example.com/cadenza', { allowPrivate: false }).href).toBe('https://hooks.example.com/cadenza');
    expect(checkEndpointUrl('http://127.0.0.1:9/hook', { allowPrivate: true }).hostname).toBe('127.0.0.1');
  });
});

describe.each(testBackends())('webhooks out (%s)', (backend) => {
  let store: TestStore;
  let seeded: Seeded;
  let service: EnrollmentService;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let dispatcher: WebhookDispatcher;
  let vault: Vault;
  const random = seededRandom(`webhooks-${backend}`);
  const deps = () => ({ db: store.db, clock: systemClock, random, sealer: vault });

  beforeAll(async () => {
    store = await freshStore(backend);
    vault = new Vault(store, localKeyWrapper(Buffer.alloc(32, 5)));
    service = new EnrollmentService({ store, clock: systemClock, random });
    seeded = await seedSentSequence(store, { clock: systemClock, random, service }, { mailboxEmail: `rep-${backend}@acme.test`, leads: ['a', 'b', 'c', 'd'].map((x) => `${x}-${backend}@prospects.test`), tag: `wh${backend}` });
    rx = await receiver();
    dispatcher = new WebhookDispatcher({ store, clock: systemClock, random, secrets: vault, allowPrivate: true, pollMs: 20, backoff: { baseMs: 50, capMs: 200 }, maxAttempts: 3, timeoutMs: 2_000 });
    dispatcher.start();
  }, 60_000);
  afterAll(async () => {
    await dispatcher?.stop();
    await rx?.app.close();
    await store?.destroy();
  });

  it('each recorded fact reaches the endpoints subscribed to it, signed, once; retried with backoff after 5xx; the log says how it went', async () => {
    const all = await createEndpoint(deps(), { allowPrivate: true }, { workspaceId: seeded.workspaceId, url: `${rx.url}?k=all`, events: [...webhookEvents] });
    const flaky = await createEndpoint(deps(), { allowPrivate: true }, { workspaceId: seeded.workspaceId, url: `${rx.url}?k=flaky`, events: ['reply'] });
    expect(all.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    // The replies-only endpoint refuses twice (500, 503), then takes it.
    rx.scripts.set('flaky', [500, 503]);
    const [a, b, c, d] = seeded.sends;

    await service.apply(a!.enrollmentId, { type: 'reply', messageId: '<r1@prospects.test>' });
    await service.apply(b!.enrollmentId, { type: 'bounce', hard: true, reason: '550 5.1.1 no such user' });
    await service.apply(c!.enrollmentId, { type: 'unsubscribe', source: 'link' });
    // A send, an open, a scanner's click and a person's click, a task coming due, as their writers record them.
    const stepId = (await store.db.selectFrom('step').select('id').where('sequence_id', '=', seeded.sequenceId).orderBy('position').executeTakeFirstOrThrow()).id;
    await sql`insert into event (workspace_id, enrollment_id, type, payload, at) values (${seeded.workspaceId}, ${d!.enrollmentId}, 'step_sent', '{"event":{"type":"step_sent"},"to":"active"}', now())`.execute(store.db);
    await sql`insert into tracking_event (workspace_id, enrollment_id, send_request_id, kind, url, link_index, verdict, at)
              values (${seeded.workspaceId}, ${d!.enrollmentId}, ${d!.sendRequestId}, 'open', null, null, 'human', now()),
                     (${seeded.workspaceId}, ${d!.enrollmentId}, ${d!.sendRequestId}, 'click', 'https://acme.test/p', 0, 'scanner', now()),
                     (${seeded.workspaceId}, ${d!.enrollmentId}, ${d!.sendRequestId}, 'click', 'https://acme.test/p', 0, 'human', now())`.execute(store.db);
    await sql`insert into task (id, workspace_id, enrollment_id, step_id, kind, title, due_at) values (gen_random_uuid(), ${seeded.workspaceId}, ${d!.enrollmentId}, ${stepId}, 'call', 'Call Pat', now())`.execute(store.db);

    // 7 facts to the all-events endpoint (the scanner's click left out), 3 attempts at the reply to the other.
    await until(async () => rx.got.length >= 10 && (await store.db.selectFrom('webhook_delivery').select('id').where('state', '=', 'pending').execute()).length === 0, 'every delivery settled');
    const got = rx.got.map((g) => ({ ...g, json: JSON.parse(g.body) as { id: string; type: string; data: Record<string, unknown> } }));
    const toAll = got.filter((g) => g.k === 'all');
    expect(toAll.map((g) => g.json.type).sort()).toEqual(['bounce', 'clicked', 'opened', 'reply', 'sent', 'task.due', 'unsubscribe']);
    for (const g of got) {
      expect(verify(g.headers[signatureHeader] as string, g.body, g.k === 'all' ? all.secret : flaky.secret, Date.now()), g.body).toMatchObject({ ok: true });
      expect(verify(g.headers[signatureHeader] as string, g.body, g.k === 'all' ? flaky.secret : all.secret, Date.now()).ok).toBe(false);
      expect(g.headers['cadenza-event']).toBe(g.json.type);
      expect(g.headers['cadenza-event-id']).toBe(g.json.id);
    }
    const of = (type: string) => toAll.find((g) => g.json.type === type)!.json.data;
    expect(of('clicked')).toMatchObject({ url: 'https://acme.test/p', verdict: 'human', enrollmentId: d!.enrollmentId });
    expect(of('bounce')).toMatchObject({ enrollmentId: b!.enrollmentId, applied: true, state: 'bounced', detail: { hard: true } });
    expect(of('reply')).toMatchObject({ enrollmentId: a!.enrollmentId, email: a!.leadEmail, sequenceId: seeded.sequenceId, applied: true, state: 'replied' });
    expect(of('task.due')).toMatchObject({ kind: 'call', title: 'Call Pat', email: d!.leadEmail });
    expect(of('opened')).toMatchObject({ email: d!.leadEmail, sendRequestId: d!.sendRequestId, verdict: 'human' });

    // The flaky endpoint: three attempts, the same event id and body each time, then delivered.
    const tries = got.filter((g) => g.k === 'flaky');
    expect(tries.map((g) => Number(g.headers['cadenza-attempt']))).toEqual([1, 2, 3]);
    expect(new Set(tries.map((g) => g.body)).size).toBe(1);
    expect(await listDeliveries(store.db, seeded.workspaceId, flaky.id, { limit: 5 })).toEqual([
      expect.objectContaining({ eventType: 'reply', state: 'delivered', attempts: 3, responseCode: 200, lastError: null, nextAttemptAt: null }),
    ]);
    const log = await listDeliveries(store.db, seeded.workspaceId, all.id, { limit: 50 });
    expect(log.map((l) => [l.state, l.attempts])).toEqual(Array(7).fill(['delivered', 1]));
  }, 60_000);

  it('gives up after maxAttempts with the last status in the log; refuses a loopback destination when private ones are not allowed', async () => {
    const ep = await createEndpoint(deps(), { allowPrivate: true }, { workspaceId: seeded.workspaceId, url: `${rx.url}?k=down`, events: ['reply'] });
    rx.scripts.set('down', [503, 503, 503]);
    const t = await queueTestEvent(deps(), seeded.workspaceId, ep.id);
    dispatcher.nudge();
    const failed = await until(async () => (await listDeliveries(store.db, seeded.workspaceId, ep.id, { limit: 5, state: 'failed' }))[0], 'the delivery to fail');
    expect(failed).toMatchObject({ id: t.deliveryId, eventType: 'test', state: 'failed', attempts: 3, responseCode: 503, lastError: 'HTTP 503', nextAttemptAt: null });

    // The same loopback receiver, by name, from a dispatcher that does not allow private destinations.
    const strict = new WebhookDispatcher({ store, clock: systemClock, random, secrets: vault, allowPrivate: false, maxAttempts: 1 });
    await dispatcher.stop();
    const named = await createEndpoint(deps(), { allowPrivate: true }, { workspaceId: seeded.workspaceId, url: rx.url.replace('127.0.0.1', 'localhost'), events: ['reply'] });
    const literal = await createEndpoint(deps(), { allowPrivate: true }, { workspaceId: seeded.workspaceId, url: rx.url, events: ['reply'] });
    const before = rx.got.length;
    await queueTestEvent(deps(), seeded.workspaceId, named.id);
    await queueTestEvent(deps(), seeded.workspaceId, literal.id);
    expect(await strict.runOnce()).toBe(2);
    expect(rx.got.length).toBe(before);
    expect((await listDeliveries(store.db, seeded.workspaceId, named.id, { limit: 1 }))[0]).toMatchObject({ state: 'failed', responseCode: null, lastError: expect.stringMatching(/resolves only to loopback or private addresses/) });
    expect((await listDeliveries(store.db, seeded.workspaceId, literal.id, { limit: 1 }))[0]).toMatchObject({ state: 'failed', lastError: expect.stringMatching(/refused: 127\.0\.0\.1/) });
    await expect(createEndpoint(deps(), { allowPrivate: false }, { workspaceId: seeded.workspaceId, url: rx.url, events: ['reply'] })).rejects.toSatisfy((e) => isCadenzaError(e, 'INVALID_INPUT'));

    // The log is kept for retainMs: finished deliveries older than that go, pending ones stay.
    const pending = await queueTestEvent(deps(), seeded.workspaceId, ep.id);
    const finished = (await store.db.selectFrom('webhook_delivery').select('id').where('state', '<>', 'pending').execute()).length;
    await new Promise((r) => setTimeout(r, 5));
    expect(await new WebhookDispatcher({ store, clock: systemClock, random, secrets: vault, allowPrivate: true, retainMs: 1 }).prune()).toBe(finished);
    expect((await store.db.selectFrom('webhook_delivery').select('id').execute()).map((r) => r.id)).toEqual([pending.deliveryId]);
  }, 60_000);
});
