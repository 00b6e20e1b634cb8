import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { loadMigrations, migrate } from '../../store/migrate.ts';
import { openStore, type Store } from '../../store/store.ts';
import { WebhookDispatcher } from './dispatcher.ts';
import { createEndpoint, queueTestEvent, rotateSecret } from './endpoints.ts';
import { rotateMasterKey } from '../../cli/commands/keys.ts';
import { sealLegacyWebhookSecrets } from './secrets.ts';
import { signatureHeader, verify } from './signature.ts';

/** A loopback receiver keeping each POST's raw body and signature header. */
async function receiver() {
  const app: FastifyInstance = Fastify();
  const got: Array<{ body: string; signature: string }> = [];
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_r, b, done) => done(null, b));
  app.post('/hook', async (req) => {
    got.push({ body: req.body as string, signature: req.headers[signatureHeader] as string });
    return 'ok';
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, got, url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}/hook` };
}

/** Every way a secret's bytes could sit in a row: the text, and the 32 key bytes behind 'whsec_'. */
function leaks(row: Record<string, unknown>, secret: string): string[] {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64url');
  const out: string[] = [];
  for (const [col, v] of Object.entries(row)) {
    const bytes = Buffer.isBuffer(v) || v instanceof Uint8Array ? Buffer.from(v) : Buffer.from(JSON.stringify(v ?? null), 'utf8');
    if (bytes.includes(Buffer.from(secret, 'utf8')) || bytes.includes(key) || bytes.includes(Buffer.from(key.toString('hex'))) || bytes.includes(Buffer.from(key.toString('base64')))) out.push(col);
  }
  return out;
}

const random = seededRandom('webhook-secrets');
const MASTER = Buffer.alloc(32, 11);

/** One delivery of a `test` event to the endpoint, signed by a dispatcher opening secrets with `vault`. */
async function deliverOnce(store: Store, vault: Vault, rx: Awaited<ReturnType<typeof receiver>>, workspaceId: string, endpointId: string) {
  await queueTestEvent({ db: store.db, clock: systemClock, random }, workspaceId, endpointId);
  const before = rx.got.length;
  const d = new WebhookDispatcher({ store, clock: systemClock, random, secrets: vault, allowPrivate: true, maxAttempts: 1 });
  expect(await d.runOnce()).toBe(1);
  const last = await store.db.selectFrom('webhook_delivery').select(['state', 'last_error']).where('endpoint_id', '=', endpointId).orderBy('id', 'desc').executeTakeFirstOrThrow();
  return { got: rx.got.slice(before), delivery: last };
}

describe('webhook secrets from before 0013: sealed by the first start, rotated with the master key', () => {
  let store: Store;
  let rx: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    store = await openStore({});
    rx = await receiver();
  });
  afterAll(async () => {
    await rx?.app.close();
    await store?.close();
  });

  it('0013 keeps a clear secret aside; sealing leaves no secret byte in the row; signatures verify before and after `keys rotate` (which seals what is left first)', async () => {
    await migrate(store, loadMigrations().filter((m) => m.version < 13));
    const ws = newId(Date.now(), random);
    const ep = newId(Date.now(), random);
    const secret = 'whsec_' + Buffer.alloc(32, 9).toString('base64url');
    await sql`insert into workspace (id, name) values (${ws}, 'Legacy')`.execute(store.db);
    await sql`insert into webhook_endpoint (id, workspace_id, url, events, secret) values (${ep}, ${ws}, ${`${rx.url}?k=legacy`}, ${['reply']}::text[], ${secret})`.execute(store.db);
    // A second workspace's endpoint that no start seals before `keys rotate` runs.
    const ws2 = newId(Date.now(), random);
    const ep2 = newId(Date.now(), random);
    const secret2 = 'whsec_' + Buffer.alloc(32, 8).toString('base64url');
    await sql`insert into workspace (id, name) values (${ws2}, 'Legacy 2')`.execute(store.db);
    await migrate(store);
    const vault = new Vault(store, localKeyWrapper(MASTER));
    // Before the seal, the dispatcher refuses to sign with a clear secret rather than use it.
    const early = await deliverOnce(store, vault, rx, ws, ep);
    expect(early.got).toEqual([]);
    expect(early.delivery.last_error).toMatch(/not sealed yet/);

    expect(await sealLegacyWebhookSecrets(store, vault)).toBe(1);
    expect(await sealLegacyWebhookSecrets(store, vault)).toBe(0);
    await sql`insert into webhook_endpoint (id, workspace_id, url, events, legacy_secret) values (${ep2}, ${ws2}, ${`${rx.url}?k=legacy2`}, ${['reply']}::text[], ${secret2})`.execute(store.db);
    const row = (await sql<Record<string, unknown>>`select * from webhook_endpoint where id = ${ep}`.execute(store.db)).rows[0]!;
    expect(row.legacy_secret).toBeNull();
    expect(Buffer.isBuffer(row.secret_sealed) || row.secret_sealed instanceof Uint8Array).toBe(true);
    expect(leaks(row, secret)).toEqual([]);

    const signed = await deliverOnce(store, vault, rx, ws, ep);
    expect(signed.got).toHaveLength(1);
    expect(verify(signed.got[0]!.signature, signed.got[0]!.body, secret, Date.now()).ok).toBe(true);

    // cadenza keys rotate: the data keys are rewrapped; the sealed secret opens with the new master key only.
    const next = Buffer.alloc(32, 12);
    expect(await rotateMasterKey(store, MASTER, next)).toEqual({ rewrapped: 2, sealed: 1, acmeAccounts: { rewrapped: 0, unreadable: [] } });
    const after = await deliverOnce(store, new Vault(store, localKeyWrapper(next)), rx, ws, ep);
    expect(verify(after.got[0]!.signature, after.got[0]!.body, secret, Date.now()).ok).toBe(true);
    const after2 = await deliverOnce(store, new Vault(store, localKeyWrapper(next)), rx, ws2, ep2);
    expect(verify(after2.got[0]!.signature, after2.got[0]!.body, secret2, Date.now()).ok).toBe(true);
    const row2 = (await sql<Record<string, unknown>>`select * from webhook_endpoint where id = ${ep2}`.execute(store.db)).rows[0]!;
    expect(leaks(row2, secret2)).toEqual([]);
    const stale = await deliverOnce(store, new Vault(store, localKeyWrapper(MASTER)), rx, ws, ep);
    expect(stale.got).toEqual([]);
    expect(stale.delivery).toMatchObject({ state: 'failed', last_error: expect.stringMatching(/cannot sign: .*master key/) });
  }, 60_000);
});

describe.each(testBackends())('webhook secrets sealed (%s)', (backend) => {
  let store: TestStore;
  let vault: Vault;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let ws: string;
  const deps = () => ({ db: store.db, clock: systemClock, random, sealer: vault });
  beforeAll(async () => {
    store = await freshStore(backend);
    vault = new Vault(store, localKeyWrapper(MASTER));
    rx = await receiver();
    ws = newId(Date.now(), random);
    await store.db.insertInto('workspace').values({ id: ws, name: 'Sealed' }).execute();
  }, 60_000);
  afterAll(async () => {
    await rx?.app.close();
    await store?.destroy();
  });

  it('a new endpoint stores no secret byte; the secret is bound to its endpoint', async () => {
    const a = await createEndpoint(deps(), { allowPrivate: true }, { workspaceId: ws, url: `${rx.url}?k=a`, events: ['reply'] });
    const b = await createEndpoint(deps(), { allowPrivate: true }, { workspaceId: ws, url: `${rx.url}?k=b`, events: ['reply'] });
    const rows = (await sql<Record<string, unknown>>`select * from webhook_endpoint where workspace_id = ${ws}`.execute(store.db)).rows;
    for (const r of rows) expect(leaks(r, a.secret).concat(leaks(r, b.secret))).toEqual([]);
    const signed = await deliverOnce(store, vault, rx, ws, a.id);
    expect(verify(signed.got[0]!.signature, signed.got[0]!.body, a.secret, Date.now()).ok).toBe(true);
    // A's sealed secret copied onto B's row does not open there (associated data 'webhook:<id>').
    await sql`update webhook_endpoint set secret_sealed = (select secret_sealed from webhook_endpoint where id = ${a.id}) where id = ${b.id}`.execute(store.db);
    const moved = await deliverOnce(store, vault, rx, ws, b.id);
    expect(moved.got).toEqual([]);
    expect(moved.delivery.last_error).toMatch(/cannot sign: a sealed webhook secret failed to decrypt/);
  }, 30_000);

  it('rotation: the new secret signs at once, the old one alongside until its overlap ends, or not at all with 0', async () => {
    const ep = await createEndpoint(deps(), { allowPrivate: true }, { workspaceId: ws, url: `${rx.url}?k=r`, events: ['reply'] });
    const r1 = await rotateSecret(deps(), ws, ep.id, 3_600_000);
    expect(r1.secret).not.toBe(ep.secret);
    expect(Date.parse(r1.previousSecretExpiresAt!) - Date.now()).toBeGreaterThan(3_500_000);
    const both = (await deliverOnce(store, vault, rx, ws, ep.id)).got[0]!;
    expect(both.signature.match(/v1=/g)).toHaveLength(2);
    expect(verify(both.signature, both.body, r1.secret, Date.now()).ok).toBe(true);
    expect(verify(both.signature, both.body, ep.secret, Date.now()).ok).toBe(true);

    const r2 = await rotateSecret(deps(), ws, ep.id, 0);
    expect(r2.previousSecretExpiresAt).toBeNull();
    const only = (await deliverOnce(store, vault, rx, ws, ep.id)).got[0]!;
    expect(verify(only.signature, only.body, r2.secret, Date.now()).ok).toBe(true);
    expect(verify(only.signature, only.body, r1.secret, Date.now()).ok).toBe(false);
    expect(verify(only.signature, only.body, ep.secret, Date.now()).ok).toBe(false);
    const row = (await sql<Record<string, unknown>>`select * from webhook_endpoint where id = ${ep.id}`.execute(store.db)).rows[0]!;
    for (const s of [ep.secret, r1.secret, r2.secret]) expect(leaks(row, s)).toEqual([]);

    // An overlap that has ended signs no more: the expiry is read at signing time.
    await rotateSecret(deps(), ws, ep.id, 3_600_000);
    await store.db.updateTable('webhook_endpoint').set({ previous_secret_expires_at: new Date(Date.now() - 1000) }).where('id', '=', ep.id).execute();
    const ended = (await deliverOnce(store, vault, rx, ws, ep.id)).got[0]!;
    expect(ended.signature.match(/v1=/g)).toHaveLength(1);
    expect(verify(ended.signature, ended.body, r2.secret, Date.now()).ok).toBe(false);
    await expect(rotateSecret(deps(), newId(Date.now(), random), ep.id, 0)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  }, 30_000);
});
