import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedGraph, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { startHubSpotEmulator, type HubSpotEmulator } from '../../sim/emulators/hubspot/emulator.ts';

/**
 * The changes-in routes of a CRM connection: settings (field owners with the fixed ones refused,
 * stop rules validated), conflicts, the CRM's lists (read from the HubSpot emulator), list
 * enrollments (validated, once per list and sequence), the sync position in the connection view,
 * and the audit log.
 */
describe.each(testBackends())('CRM changes-in routes (%s)', (backend) => {
  let h: ApiHarness;
  let emu: HubSpotEmulator;
  let ws: string;
  let owner: Browser;
  let sequenceId: string;
  let connectionId: string;
  let listId: string;
  const base = () => `/api/workspaces/${ws}/crm/connections/${connectionId}`;

  beforeAll(async () => {
    h = await apiHarness(backend);
    emu = await startHubSpotEmulator();
    const w = await seedWorkspace(h.store, 'Acme', 'owner@example.test');
    ws = w.workspaceId;
    owner = await login(h.app, 'owner@example.test', w.password);
    sequenceId = (await seedGraph(h.store, ws, 'crm', w.userId)).sequenceId!;
    connectionId = newId(Date.now(), seededRandom(`crm-routes-${backend}`));
    await h.store.db
      .insertInto('crm_connection')
      .values({ id: connectionId, workspace_id: ws, kind: 'hubspot', base_url: emu.baseUrl, credentials: await h.ctx.vault!.seal(ws, `crm:${connectionId}`, emu.tokens.issue('portal')) })
      .execute();
    listId = emu.addList('Q1 targets');
    emu.addToList(listId, [emu.addContact({ email: 'ana@prospect.test' })]);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await emu?.close();
  });

  it('settings: the defaults, an owner change, the fixed fields and unknown ones refused, stop rules validated', async () => {
    const got = await owner.call('GET', `${base()}/settings`);
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json()).toMatchObject({
      fieldOwners: { email: 'crm', title: 'crm', cadenzaSequenceStatus: 'cadenza' },
      fixedFields: expect.arrayContaining(['email', 'cadenzaSequenceStatus', 'cadenzaLastActivityAt']),
      stopRules: { doNotContact: true, dealCreated: true, dealStages: [], ownerChanged: 'stop', lifecycleStages: ['customer'] },
    });
    const changed = await owner.call('PATCH', `${base()}/settings`, { fieldOwners: { title: 'cadenza' }, stopRules: { dealStages: ['closedwon'], ownerChanged: 'ignore' } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ fieldOwners: { title: 'cadenza', phone: 'crm' }, stopRules: { dealStages: ['closedwon'], ownerChanged: 'ignore', doNotContact: true } });
    for (const body of [{ fieldOwners: { email: 'cadenza' } }, { fieldOwners: { cadenzaSequenceStatus: 'crm' } }, { fieldOwners: { favouriteColour: 'crm' } }, { stopRules: { dealStages: [''] } }, { stopRules: { ownerChanged: 'reassign' } }]) {
      const r = await owner.call('PATCH', `${base()}/settings`, body);
      expect([r.statusCode, r.json().error.code], JSON.stringify(body)).toEqual([400, 'INVALID_INPUT']);
    }
    // Refused changes changed nothing.
    expect((await owner.call('GET', `${base()}/settings`)).json()).toMatchObject({ fieldOwners: { email: 'crm', title: 'cadenza', cadenzaSequenceStatus: 'cadenza' }, stopRules: { dealStages: ['closedwon'] } });
    const stored = await h.store.db.selectFrom('crm_connection').select(['field_owners', 'stop_rules']).where('id', '=', connectionId).executeTakeFirstOrThrow();
    expect(stored).toEqual({ field_owners: { title: 'cadenza' }, stop_rules: { dealStages: ['closedwon'], ownerChanged: 'ignore' } });
  });

  it("lists from the CRM; a list enrolled once per sequence; an unknown list or another workspace's sequence refused", async () => {
    const lists = await owner.call('GET', `${base()}/lists`);
    expect(lists.statusCode, lists.body).toBe(200);
    expect(lists.json()).toEqual({ lists: [{ id: listId, name: 'Q1 targets', size: 1 }] });
    const unknown = await owner.call('POST', `${base()}/list-enrollments`, { listId: '999', sequenceId });
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, 'NOT_FOUND']);
    const elsewhere = await owner.call('POST', `${base()}/list-enrollments`, { listId, sequenceId: '00000000-0000-4000-8000-000000000001' });
    expect(elsewhere.statusCode).toBe(404);
    const made = await owner.call('POST', `${base()}/list-enrollments`, { listId, sequenceId, mode: 'continuous' });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({ listId, listName: 'Q1 targets', sequenceId, mode: 'continuous', state: 'active', enrolled: 0 });
    const again = await owner.call('POST', `${base()}/list-enrollments`, { listId, sequenceId });
    expect([again.statusCode, again.json().error.code]).toEqual([409, 'CONFLICT']);
    expect((await owner.call('GET', `${base()}/list-enrollments`)).json().listEnrollments).toHaveLength(1);
  });

  it('conflicts newest first, and the sync position in the connection view', async () => {
    expect((await owner.call('GET', `${base()}/conflicts`)).json()).toEqual({ conflicts: [] });
    const at = new Date('2026-01-05T09:00:00Z');
    for (const v of ['first', 'second']) {
      await h.store.db.insertInto('crm_conflict').values({ connection_id: connectionId, workspace_id: ws, crm_id: '51001', email: 'ana@prospect.test', field: 'cadenzaSequenceStatus', crm_value: v, cadenza_value: 'active', crm_updated_at: new Date(at.getTime() + (v === 'first' ? 0 : 1000)) }).execute();
    }
    const c = (await owner.call('GET', `${base()}/conflicts?limit=1`)).json().conflicts;
    expect(c).toEqual([expect.objectContaining({ crmValue: 'second', cadenzaValue: 'active', field: 'cadenzaSequenceStatus', crmUpdatedAt: '2026-01-05T09:00:01.000Z' })]);
    expect((await owner.call('GET', `${base()}/conflicts?before=${c[0].id}`)).json().conflicts.map((x: { crmValue: string }) => x.crmValue)).toEqual(['first']);
    await h.store.db.updateTable('crm_connection').set({ change_cursor: '{}', change_cursor_at: at, last_change_at: at }).where('id', '=', connectionId).execute();
    const view = (await owner.call('GET', `/api/workspaces/${ws}/crm/connections`)).json().connections[0];
    expect(view.changes).toEqual({ cursorAt: at.toISOString(), lastChangeAt: at.toISOString(), readError: null, contacts: 0, conflicts: 2 });
  });

  it('the changes are audited', async () => {
    const log = (await owner.call('GET', `/api/workspaces/${ws}/audit-log?limit=50`)).json().events as Array<{ action: string; target: string }>;
    expect(log.filter((e) => e.action.startsWith('crm.')).map((e) => [e.action, e.target])).toEqual([
      ['crm.list_enrolled', `crm:${connectionId}`],
      ['crm.settings_changed', `crm:${connectionId}`],
    ]);
  });
});
