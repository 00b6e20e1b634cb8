import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { startHubSpotEmulator, type HubSpotEmulator } from '../sim/emulators/hubspot/emulator.ts';
import { startTwentyEmulator, type TwentyEmulator } from '../sim/emulators/twenty/emulator.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import type { TokenSealer } from './connections.ts';
import { CrmSync } from './crm-sync.ts';

/**
 * The sync loop as the API role runs it: one round prepares HubSpot (the writer), then reads its
 * changes (the reader) through the connection's sealed token; a paused connection is left alone
 * by both. The token is "sealed" by a test sealer that only tags it, bound to its context as the
 * vault's is.
 */
const sealer: TokenSealer = {
  seal: async (ws, ctx, plain) => Buffer.from(`${ws}|${ctx}|${plain}`),
  open: async (ws, ctx, sealed) => {
    const [w, c, plain] = Buffer.from(sealed).toString().split('|');
    if (w !== ws || c !== ctx) throw new Error('sealed for another connection');
    return plain!;
  },
};

describe('the CRM sync round (pglite)', () => {
  let store: TestStore;
  let emu: HubSpotEmulator;
  let seeded: Seeded;
  let sync: CrmSync;
  let connectionId: string;
  const random = seededRandom('crm-sync-round');

  beforeAll(async () => {
    store = await freshStore('pglite');
    emu = await startHubSpotEmulator({ searchesPerSecond: 1000, requestsPerWindow: 100_000 });
    const service = new EnrollmentService({ store, clock: systemClock, random });
    seeded = await seedSentSequence(store, { clock: systemClock, random, service }, { mailboxEmail: 'rep@acme.test', leads: ['ana@prospects.test'], tag: 'crmsync' });
    connectionId = randomUUID();
    await store.db
      .insertInto('crm_connection')
      .values({ id: connectionId, workspace_id: seeded.workspaceId, kind: 'hubspot', base_url: emu.baseUrl, credentials: await sealer.seal(seeded.workspaceId, `crm:${connectionId}`, emu.tokens.issue('portal')) })
      .execute();
    sync = new CrmSync({ store, clock: systemClock, random, owner: 'crm:test', sealer, engine: service, pollMs: 60_000 });
  }, 60_000);
  afterAll(async () => {
    await sync?.stop();
    await emu?.close();
    await store?.destroy();
  });

  it('one round prepares the CRM and reads its changes into the lead; a paused connection is not read', async () => {
    const ana = emu.addContact({ email: 'ana@prospects.test', firstname: 'Ana' });
    await sync.round();
    expect(emu.store.property('contacts', 'cadenza_sequence_status')).toBeDefined();
    expect(await store.db.selectFrom('lead').select('first_name').where('workspace_id', '=', seeded.workspaceId).executeTakeFirstOrThrow()).toEqual({ first_name: 'Ana' });
    expect((await store.db.selectFrom('crm_connection').select(['change_cursor', 'integration_user_id']).where('id', '=', connectionId).executeTakeFirstOrThrow()).integration_user_id).toBe(emu.userIdOf('portal'));

    await store.db.updateTable('crm_connection').set({ state: 'paused', paused_reason: 'paused by an admin' }).where('id', '=', connectionId).execute();
    await new Promise((r) => setTimeout(r, 5));
    emu.updateContact(ana, { firstname: 'Anna' });
    sync.nudge();
    await sync.round();
    expect((await store.db.selectFrom('lead').select('first_name').where('workspace_id', '=', seeded.workspaceId).executeTakeFirstOrThrow()).first_name).toBe('Ana');
    await store.db.updateTable('crm_connection').set({ state: 'active', paused_reason: null }).where('id', '=', connectionId).execute();
    sync.nudge();
    await sync.round();
    expect((await store.db.selectFrom('lead').select('first_name').where('workspace_id', '=', seeded.workspaceId).executeTakeFirstOrThrow()).first_name).toBe('Anna');
  });
});

describe('the CRM sync round shares the CRM limit between reading and writing (pglite)', () => {
  let store: TestStore;
  let emu: TwentyEmulator;
  const random = seededRandom('crm-sync-limit');

  beforeAll(async () => {
    store = await freshStore('pglite');
  }, 60_000);
  afterAll(async () => {
    await emu?.close();
    await store?.destroy();
  });

  it('a backlog of activities and changes read every round stay within Twenty’s 100 requests a minute, and both get done', async () => {
    const clock = new SimClock(Date.UTC(2026, 10, 2, 13, 0));
    emu = await startTwentyEmulator({ clock });
    const service = new EnrollmentService({ store, clock, random });
    const seeded = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep@acme.test', leads: ['bo@prospects.test'], tag: 'crmlimit' });
    const people = Array.from({ length: 20 }, (_, i) => `p${i}@prospects.test`);
    for (const email of people) emu.addPerson({ email });
    const bo = emu.addPerson({ email: 'bo@prospects.test', firstName: 'Bo' });
    const connectionId = randomUUID();
    await store.db
      .insertInto('crm_connection')
      .values({ id: connectionId, workspace_id: seeded.workspaceId, kind: 'twenty', base_url: emu.baseUrl, credentials: await sealer.seal(seeded.workspaceId, `crm:${connectionId}`, emu.tokens.issue('workspace')) })
      .execute();
    const at = new Date(clock.now());
    await store.db
      .insertInto('crm_activity')
      .values(Array.from({ length: 900 }, (_, n) => ({ connection_id: connectionId, workspace_id: seeded.workspaceId, external_id: `cadenza:limit:${n}`, kind: 'email_opened', email: people[n % people.length]!, payload: JSON.stringify({ verdict: 'human' }), occurred_at: at, next_attempt_at: at })))
      .execute();
    // Read at every round that has room: the read interval is not what keeps the limit.
    const sync = new CrmSync({ store, clock, random, owner: 'crm:limit', sealer, engine: service, readEveryMs: 2_000 });
    for (let i = 0; i < 30 * 30; i++) {
      await sync.round();
      if (i === 300) emu.edit('people', bo, { jobTitle: 'CTO' });
      clock.advanceTo(clock.now() + 2_000);
    }
    expect(emu.requests.filter((r) => r.outcome === 429)).toEqual([]);
    expect(emu.stats().highestInWindow).toBeLessThanOrEqual(100);
    expect(await store.db.selectFrom('crm_activity').select('state').where('connection_id', '=', connectionId).where('state', '!=', 'written').execute()).toEqual([]);
    expect(emu.activities()).toHaveLength(900);
    expect((await store.db.selectFrom('lead').select('title').where('email', '=', 'bo@prospects.test').executeTakeFirstOrThrow()).title).toBe('CTO');
  }, 120_000);
});
