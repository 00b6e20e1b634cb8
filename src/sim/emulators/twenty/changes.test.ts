import { describe, expect, it } from 'vitest';
import { emulatorTestKit } from '../../../../test/emulators/kit.ts';
import { startTwentyEmulator } from './emulator.ts';

/**
 * What a change reader relies on, over HTTP: updatedAt and updatedBy moved by every write and
 * stamped with its actor, order_by with exact cursors over equal values, soft deletes seen only
 * through a deletedAt filter, PATCH on a custom field, companies / members / opportunities, views.
 */
const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);
const kit = emulatorTestKit('Cadenza', T0, (clock) => startTwentyEmulator({ clock, rateLimit: null }));
const rest = (path: string) => `${kit.emu.baseUrl}/rest/${path}`;
const q = (filter: string) => `filter=${encodeURIComponent(filter)}`;
const ids = (body: { data: Record<string, Array<{ id: string }>> }, plural: string) => body.data[plural]!.map((r) => r.id);

async function personFieldId(): Promise<string> {
  const objects = (await kit.send('GET', rest('metadata/objects'))).json.data.objects as Array<{ id: string; nameSingular: string }>;
  return objects.find((o) => o.nameSingular === 'person')!.id;
}

describe('Twenty emulator: changes', () => {
  it('a PATCH sets the fields given, moves updatedAt and stamps updatedBy with the API key; an edit in the app stamps the member', async () => {
    const ann = kit.emu.addMember({ email: 'Ann@Seller.test', firstName: 'Ann', lastName: 'Lee' });
    const p = kit.emu.addPerson({ email: 'p@x.test', by: ann });
    const created = kit.emu.store.get('people', p)!;
    expect(created.createdBy).toEqual({ source: 'MANUAL', workspaceMemberId: ann, name: 'Ann Lee', context: {} });

    kit.clock.advance(5_000);
    const r = await kit.send('PATCH', rest(`people/${p}`), { jobTitle: 'CTO' });
    expect(r.status).toBe(200);
    expect(r.json.data.updatePerson).toMatchObject({
      id: p,
      jobTitle: 'CTO',
      createdAt: new Date(T0).toISOString(),
      updatedAt: new Date(T0 + 5_000).toISOString(),
      updatedBy: { source: 'API', workspaceMemberId: null, name: 'cadenza', context: {} },
      createdBy: { workspaceMemberId: ann },
    });
    kit.clock.advance(1_000);
    kit.emu.edit('people', p, { city: 'Lyon' }, ann);
    expect(kit.emu.store.get('people', p)).toMatchObject({ updatedAt: new Date(T0 + 6_000).toISOString(), updatedBy: { source: 'MANUAL', workspaceMemberId: ann } });

    expect((await kit.send('PATCH', rest(`people/${p}`), { updatedAt: '2020-01-01T00:00:00Z' })).status).toBe(400);
    expect((await kit.send('PATCH', rest(`people/${p}`), { nickname: 'x' })).status).toBe(400);
    expect((await kit.send('PATCH', rest('people/00000000-0000-4000-8000-0000000fffff'), { city: 'x' })).status).toBe(404);
  });

  it('custom fields on people: a TEXT and a DATE_TIME created through the metadata API, then written by PATCH and cleared with null', async () => {
    const objectMetadataId = await personFieldId();
    expect((await kit.send('POST', rest('metadata/fields'), { objectMetadataId, type: 'TEXT', name: 'cadenzaSequenceStatus', label: 'Status' })).status).toBe(201);
    expect((await kit.send('POST', rest('metadata/fields'), { objectMetadataId, type: 'DATE_TIME', name: 'cadenzaLastActivityAt', label: 'Last' })).status).toBe(201);
    const p = kit.emu.addPerson({ email: 'p@x.test' });
    const r = await kit.send('PATCH', rest(`people/${p}`), { cadenzaSequenceStatus: 'active', cadenzaLastActivityAt: '2026-03-01T10:00:00+01:00' });
    expect(r.json.data.updatePerson).toMatchObject({ cadenzaSequenceStatus: 'active', cadenzaLastActivityAt: '2026-03-01T09:00:00.000Z' });
    expect((await kit.send('PATCH', rest(`people/${p}`), { cadenzaLastActivityAt: 'soon' })).status).toBe(400);
    expect((await kit.send('PATCH', rest(`people/${p}`), { cadenzaLastActivityAt: null })).json.data.updatePerson.cadenzaLastActivityAt).toBeNull();
    const fields = (await kit.send('GET', rest('metadata/objects'))).json.data.objects[0].fields as Array<{ name: string; type: string; isCustom: boolean }>;
    expect(fields.find((f) => f.name === 'cadenzaLastActivityAt')).toMatchObject({ type: 'DATE_TIME', isCustom: true });
  });

  it('order_by updatedAt with id last: equal timestamps page exactly with starting_after; a bad direction is a 400', async () => {
    const made = Array.from({ length: 5 }, (_, i) => kit.emu.addPerson({ email: `p${i}@x.test` }));
    kit.clock.advance(1_000);
    kit.emu.edit('people', made[0]!, { city: 'later' });
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const r = (await kit.send('GET', `${rest('people')}?order_by=updatedAt[AscNullsFirst]&limit=2${after ? `&starting_after=${encodeURIComponent(after)}` : ''}`)).json;
      seen.push(...ids(r, 'people'));
      if (!r.pageInfo.hasNextPage) break;
      after = r.pageInfo.endCursor;
    }
    expect(seen).toEqual([...made.slice(1), made[0]]);
    const desc = (await kit.send('GET', `${rest('people')}?order_by=updatedAt[DescNullsLast]`)).json;
    expect(ids(desc, 'people')[0]).toBe(made[0]);
    const gte = (await kit.send('GET', `${rest('people')}?${q(`updatedAt[gte]:${new Date(T0 + 1_000).toISOString()}`)}`)).json;
    expect(ids(gte, 'people')).toEqual([made[0]]);
    const bad = await kit.send('GET', `${rest('people')}?order_by=updatedAt[Up]`);
    expect(bad.status).toBe(400);
    expect(bad.json.messages[0]).toContain(`'order_by' direction 'Up' invalid`);
    expect((await kit.send('GET', `${rest('people')}?order_by=nickname`)).status).toBe(400);
  });

  it('soft delete: hidden from lists, listed when the filter names deletedAt; DELETE without soft_delete destroys', async () => {
    const a = kit.emu.addPerson({ email: 'a@x.test' });
    const b = kit.emu.addPerson({ email: 'b@x.test' });
    const c = kit.emu.addPerson({ email: 'c@x.test' });
    kit.clock.advance(2_000);
    kit.emu.trash('people', a);
    expect((await kit.send('DELETE', `${rest(`people/${b}`)}?soft_delete=true`)).json).toEqual({ data: { deletePerson: { id: b } } });
    expect((await kit.send('DELETE', rest(`people/${c}`))).status).toBe(200);
    expect(ids((await kit.send('GET', rest('people'))).json, 'people')).toEqual([]);
    const trash = (await kit.send('GET', `${rest('people')}?${q('deletedAt[is]:NOT_NULL')}`)).json;
    expect(ids(trash, 'people')).toEqual([a, b]);
    expect(trash.data.people[0].deletedAt).toBe(new Date(T0 + 2_000).toISOString());
    // Soft delete leaves updatedAt where it was (emulator's choice, unverified for Twenty).
    expect(trash.data.people[0].updatedAt).toBe(new Date(T0).toISOString());
    const all = (await kit.send('GET', `${rest('people')}?${q('or(deletedAt[is]:NULL,deletedAt[is]:NOT_NULL)')}`)).json;
    expect(ids(all, 'people')).toEqual([a, b]);
    expect((await kit.send('PATCH', rest(`people/${a}`), { city: 'x' })).status).toBe(404);
  });

  it('companies, workspace members and opportunities: relations by id, stage options, amount in micros', async () => {
    const ann = kit.emu.addMember({ email: 'ann@seller.test', firstName: 'Ann' });
    const acme = kit.emu.addCompany({ name: 'Acme', accountOwnerId: ann });
    const p = kit.emu.addPerson({ email: 'p@acme.test', companyId: acme, phone: '5550100' });
    const o = kit.emu.addOpportunity({ name: 'Acme deal', stage: 'MEETING', pointOfContactId: p, companyId: acme, ownerId: ann, amountMicros: 5_000_000_000 });
    expect((await kit.send('GET', `${rest('companies')}?${q(`id[in]:[${acme}]`)}`)).json.data.companies[0]).toMatchObject({ name: 'Acme', accountOwnerId: ann });
    expect((await kit.send('GET', rest('workspaceMembers'))).json.data.workspaceMembers[0]).toMatchObject({ id: ann, userEmail: 'ann@seller.test' });
    expect((await kit.send('GET', rest('people'))).json.data.people[0]).toMatchObject({ companyId: acme, phones: { primaryPhoneNumber: '5550100' } });
    expect((await kit.send('GET', rest('opportunities'))).json.data.opportunities[0]).toMatchObject({ id: o, stage: 'MEETING', pointOfContactId: p, amount: { amountMicros: 5_000_000_000, currencyCode: 'USD' } });
    expect((await kit.send('PATCH', rest(`opportunities/${o}`), { stage: 'WON' })).status).toBe(400);
    const objects = (await kit.send('GET', rest('metadata/objects'))).json.data.objects as Array<{ nameSingular: string; fields: Array<{ name: string; options: unknown }> }>;
    const stage = objects.find((x) => x.nameSingular === 'opportunity')!.fields.find((f) => f.name === 'stage')!;
    expect(stage.options).toContainEqual({ value: 'CUSTOMER', label: 'Customer', position: 4 });
  });

  it('views: listed per object through the metadata API, with their filters naming fields by metadata id', async () => {
    const v = kit.emu.addView({ name: 'CTOs', object: 'people', filters: [{ field: 'jobTitle', operand: 'CONTAINS', value: 'CTO' }] });
    kit.emu.addView({ name: 'Big deals', object: 'opportunities', filters: [] });
    const personObject = await personFieldId();
    const views = (await kit.send('GET', `${rest('metadata/views')}?objectMetadataId=${personObject}`)).json;
    expect(views).toEqual([{ id: v, name: 'CTOs', objectMetadataId: personObject, type: 'TABLE', key: null, position: 0 }]);
    expect((await kit.send('GET', rest('metadata/views'))).json).toHaveLength(2);
    const filters = (await kit.send('GET', `${rest('metadata/viewFilters')}?viewId=${v}`)).json;
    const jobTitle = kit.emu.store.objects.get('people')!.fields.get('jobTitle')!.id;
    expect(filters).toEqual([expect.objectContaining({ viewId: v, fieldMetadataId: jobTitle, operand: 'CONTAINS', value: 'CTO', subFieldName: null, viewFilterGroupId: null })]);
  });
});
