import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { startHubSpotEmulator, type HubSpotEmulator } from '../sim/emulators/hubspot/emulator.ts';
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
