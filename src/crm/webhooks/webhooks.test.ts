import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSentSequence } from '../../../test/ingest/seed-sent-sequence.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { buildServer } from '../../api/server.ts';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { startHubSpotEmulator, type HubSpotEmulator } from '../../sim/emulators/hubspot/emulator.ts';
import { startPipedriveEmulator, type PipedriveEmulator } from '../../sim/emulators/pipedrive/emulator.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import type { ReadResult } from '../change-reader.ts';
import { CrmSync } from '../crm-sync.ts';
import { hookUrl, setHookSecret } from './register.ts';

/**
 * Webhooks as triggers, end to end: the CRM's emulator posts its webhook (Pipedrive: registered by
 * Cadenza with basic auth; HubSpot: v3-signed to the target its admin configured) to the receiver
 * of a real API server on loopback, and the sync loop, rounds driven on a simulated clock with a
 * read interval of 10 minutes, reads the change at its next round (2 s). A burst of duplicated and
 * reordered deliveries costs one read and stores the newest version once; a dropped delivery is
 * caught by the reconcile poll. The deliveries are real HTTP; the receiver checks HubSpot's
 * timestamps on the real clock, as in production.
 */
const LONG = 10 * 60_000;

/** The versions each read that stored any stored: one read storing one version is [1]. */
const stored = (reads: ReadResult[]) => reads.map((r) => r.changes).filter((n) => n > 0);

/**
 * Rounds until the reader has nothing left to finish: a read whose field writes did not fit the
 * CRM's window (Pipedrive's 20 requests per 2 s) comes back at the next round on its own, which
 * would read a change without any webhook and prove nothing about them.
 */
async function settle(c: { reads: ReadResult[]; nextRound: () => Promise<void> }): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const n = c.reads.length;
    await c.nextRound();
    if (c.reads.length === n) return;
  }
  throw new Error(`the reader kept coming back: ${JSON.stringify(c.reads.slice(-3))}`);
}

describe.each(testBackends())('CRM webhooks wake the change reader (%s)', (backend) => {
  let store: TestStore;
  let vault: Vault;
  let server: ReturnType<typeof buildServer>;
  let publicUrl: string;
  let pd: PipedriveEmulator;
  let hs: HubSpotEmulator;
  const clock = new SimClock(Date.now());
  const random = seededRandom(`crm-hooks-${backend}`);

  beforeAll(async () => {
    store = await freshStore(backend);
    vault = new Vault(store, localKeyWrapper(Buffer.alloc(32, 9)));
    server = buildServer({ store, clock: systemClock, version: 'test', crmHooks: { sealer: vault, publicUrl: 'http://127.0.0.1' } });
    await server.listen({ host: '127.0.0.1', port: 0 });
    publicUrl = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    // The receiver's public URL is known only once it listens: built again with it (HubSpot signs the full URL).
    await server.close();
    server = buildServer({ store, clock: systemClock, version: 'test', crmHooks: { sealer: vault, publicUrl } });
    await server.listen({ host: '127.0.0.1', port: Number(new URL(publicUrl).port) });
    pd = await startPipedriveEmulator({ clock, users: [{ name: 'Integration', email: 'integration@acme.test' }, { name: 'Rep', email: 'rep@acme.test' }], webhookRetryDelaysMs: [10, 20] });
    hs = await startHubSpotEmulator({ clock, searchesPerSecond: 1000, requestsPerWindow: 100_000, webhookRetryDelaysMs: [10, 20], webhookDelayMs: 50 });
  }, 60_000);
  afterAll(async () => {
    await pd?.close();
    await hs?.close();
    await server?.close();
    await store?.destroy();
  });

  async function connect(kind: 'pipedrive' | 'hubspot', baseUrl: string, token: string) {
    const service = new EnrollmentService({ store, clock, random });
    const email = `ana-${kind}@prospects.test`;
    const seeded = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: `rep-${kind}@acme.test`, leads: [email], tag: `hooks${kind}${backend}` });
    const id = randomUUID();
    await store.db.insertInto('crm_connection').values({ id, workspace_id: seeded.workspaceId, kind, base_url: baseUrl, credentials: await vault.seal(seeded.workspaceId, `crm:${id}`, token) }).execute();
    const reads: ReadResult[] = [];
    const sync = new CrmSync({ store, clock, random, owner: `crm:${kind}`, sealer: vault, engine: service, publicUrl, readEveryMs: LONG, reconcileEveryMs: LONG, onRead: (_, r) => reads.push(r) });
    const title = async () => (await store.db.selectFrom('lead').select('title').where('email_norm', '=', email).executeTakeFirstOrThrow()).title;
    /** The loop's next round, one poll (2 s) later. */
    const nextRound = async (ms = 2_000) => {
      clock.advanceTo(clock.now() + ms);
      await sync.round();
    };
    return { id, email, sync, reads, title, nextRound, workspaceId: seeded.workspaceId };
  }

  /**
   * After a burst of deliveries (already made): one read stores the newest version once (`title`).
   * Then a change whose delivery is dropped: no round reads it until the reconcile poll, 10 minutes on.
   */
  async function burstThenDrop(
    c: Awaited<ReturnType<typeof connect>>,
    hooks: { inject(f: 'drop'): void; idle(): Promise<void> },
    title: string,
    change: () => void,
  ): Promise<void> {
    await hooks.idle();
    const burst = c.reads.length;
    await c.nextRound();
    await c.nextRound();
    expect(stored(c.reads.slice(burst))).toEqual([1]);
    expect(await c.title()).toBe(title);
    await settle(c);
    hooks.inject('drop');
    clock.advanceTo(clock.now() + 1_000);
    change();
    await hooks.idle();
    await c.nextRound();
    expect(await c.title()).toBe(title);
    await c.nextRound(LONG);
    expect(await c.title()).toBe('CFO');
  }

  it('Pipedrive: registered on connect with basic auth; a change is read at the next round; duplicates and reordering cost one read; a dropped delivery is caught by the reconcile poll', async () => {
    const c = await connect('pipedrive', pd.baseUrl, pd.tokens.issue('integration@acme.test'));
    const ana = pd.addPerson({ email: c.email, name: 'Ana', ownerEmail: 'rep@acme.test' });
    await c.sync.round();
    expect(pd.webhooks.registered().map((h) => [h.object, h.action, h.url, h.auth?.user])).toEqual([
      ['person', '*', hookUrl(publicUrl, c.id), 'cadenza'],
      ['deal', '*', hookUrl(publicUrl, c.id), 'cadenza'],
    ]);
    const row = await store.db.selectFrom('crm_connection').select(['hook_secret', 'hook_ids']).where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(row.hook_secret).not.toBeNull();
    // Sealed: the password Pipedrive holds is not in the row.
    expect(Buffer.from(row.hook_secret!).toString('latin1')).not.toContain(pd.webhooks.registered()[0]!.auth!.password);
    expect(row.hook_ids).toEqual(pd.webhooks.registered().map((h) => String(h.id)));

    await settle(c);
    const readsBefore = c.reads.length;
    clock.advanceTo(clock.now() + 1_000);
    pd.updatePerson(ana, { job_title: 'CTO' }, 'rep@acme.test');
    await pd.webhooks.idle();
    await c.nextRound();
    expect(stored(c.reads.slice(readsBefore))).toEqual([1]);
    expect(await c.title()).toBe('CTO');

    // Duplicated and out of order: four deliveries for three changes, one read, the newest stored.
    pd.webhooks.inject('duplicate');
    clock.advanceTo(clock.now() + 1_000);
    pd.updatePerson(ana, { job_title: 'CEO' }, 'rep@acme.test');
    pd.webhooks.inject('reorder');
    clock.advanceTo(clock.now() + 1_000);
    pd.updatePerson(ana, { job_title: 'Founder' }, 'rep@acme.test');
    clock.advanceTo(clock.now() + 1_000);
    pd.updatePerson(ana, { name: 'Ana Lima' }, 'rep@acme.test');
    await burstThenDrop(c, pd.webhooks, 'Founder', () => pd.updatePerson(ana, { job_title: 'CFO' }, 'rep@acme.test'));
    await c.sync.stop();
  }, 60_000);

  it('Pipedrive: a resumed connection registers again, deleting its old webhooks first', async () => {
    const c = await connect('pipedrive', pd.baseUrl, pd.tokens.issue('integration@acme.test'));
    await store.db.deleteFrom('crm_connection').where('kind', '=', 'pipedrive').where('id', '!=', c.id).execute();
    await c.sync.round();
    const first = pd.webhooks.registered().filter((h) => h.url === hookUrl(publicUrl, c.id)).map((h) => h.id);
    expect(first).toHaveLength(2);
    await store.db.updateTable('crm_connection').set({ hooks_registered_at: null }).where('id', '=', c.id).execute();
    c.sync.nudge();
    await c.nextRound();
    const now = pd.webhooks.registered().filter((h) => h.url === hookUrl(publicUrl, c.id)).map((h) => h.id);
    expect(now).toHaveLength(2);
    expect(now.some((id) => first.includes(id))).toBe(false);
    await c.sync.stop();
  }, 60_000);

  it('HubSpot: v3-signed deliveries to the target its admin set wake the reader; delayed, duplicated and dropped deliveries too', async () => {
    const c = await connect('hubspot', hs.baseUrl, hs.tokens.issue('portal'));
    await setHookSecret({ db: store.db, sealer: vault }, c.workspaceId, c.id, 'hs-client-secret');
    hs.webhooks.configure({ url: hookUrl(publicUrl, c.id), clientSecret: 'hs-client-secret' });
    const rep = hs.addOwner({ email: 'rep@acme.test' });
    const ana = hs.addContact({ email: c.email, firstname: 'Ana' }, { by: String(rep.userId) });
    await hs.webhooks.idle();
    await c.sync.round();
    await settle(c);
    const readsBefore = c.reads.length;

    clock.advanceTo(clock.now() + 1_000);
    hs.webhooks.inject('delay');
    hs.updateContact(ana, { jobtitle: 'CTO' }, { by: String(rep.userId) });
    await hs.webhooks.idle();
    await c.nextRound();
    expect(stored(c.reads.slice(readsBefore))).toEqual([1]);
    expect(await c.title()).toBe('CTO');

    hs.webhooks.inject('duplicate');
    clock.advanceTo(clock.now() + 1_000);
    hs.updateContact(ana, { jobtitle: 'CEO' }, { by: String(rep.userId) });
    await burstThenDrop(c, hs.webhooks, 'CEO', () => hs.updateContact(ana, { jobtitle: 'CFO' }, { by: String(rep.userId) }));
    expect(hs.webhooks.deliveries.every((d) => d.fault === 'drop' || d.attempts.every((s) => s === 204))).toBe(true);
    await c.sync.stop();
  }, 60_000);
});
