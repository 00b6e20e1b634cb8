import { describe, expect, it } from 'vitest';
import { emulatorTestKit } from '../../../../test/emulators/kit.ts';
import { startTwentyEmulator, type TwentyEmulator } from './emulator.ts';
import { twentyErrors } from './errors.ts';

/**
 * The emulator's own promises, checked over HTTP: Twenty's answer shapes (auth, filters, paging,
 * validation, the metadata API, 429), and the faults a connector test relies on.
 */
const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);
const kit = emulatorTestKit('workspace', T0, (clock) => startTwentyEmulator({ clock, rateLimit: { requests: 50, windowMs: 60_000 } }));
const rest = (path: string) => `${kit.emu.baseUrl}/rest/${path}`;
const q = (filter: string) => `filter=${encodeURIComponent(filter)}`;

async function raw(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, json: await res.json() };
}

/** The custom field the connector creates, through the metadata API. */
async function addExternalIdField(emu: TwentyEmulator, object: 'note' | 'task') {
  const objects = (await kit.send('GET', `${emu.baseUrl}/rest/metadata/objects`)).json.data.objects as Array<{ id: string; nameSingular: string }>;
  const id = objects.find((o) => o.nameSingular === object)!.id;
  return kit.send('POST', `${emu.baseUrl}/rest/metadata/fields`, { objectMetadataId: id, type: 'TEXT', name: 'cadenzaActivityId', label: 'Cadenza activity ID' });
}

describe('Twenty emulator', () => {
  it('API key: none is 403, an unknown one 401 "Token invalid.", a revoked one 401 "Token has expired."', async () => {
    expect(await raw(rest('people'))).toEqual({ status: 403, json: { statusCode: 403, error: 'FORBIDDEN_EXCEPTION', messages: ['Missing authentication token'] } });
    expect(await raw(rest('people'), { authorization: 'Bearer nope' })).toEqual({ status: 401, json: { statusCode: 401, error: 'UNAUTHENTICATED', messages: ['Token invalid.'] } });
    kit.emu.tokens.expire(kit.token);
    expect((await kit.send('GET', rest('people'))).json.messages).toEqual(['Token has expired.']);
  });

  it('people: addresses stored lowercased; filter by primary email with eq, in, or(), not()', async () => {
    const ann = kit.emu.addPerson({ email: 'Ann@Acme.test', firstName: 'Ann' });
    const bob = kit.emu.addPerson({ email: 'bob@acme.test' });
    kit.emu.addPerson({ email: 'cy@other.test' });
    const ids = async (filter: string) => ((await kit.send('GET', `${rest('people')}?${q(filter)}`)).json.data.people as Array<{ id: string }>).map((p) => p.id);

    expect(await ids('emails.primaryEmail[eq]:"ann@acme.test"')).toEqual([ann]);
    expect(await ids('emails.primaryEmail[in]:["ann@acme.test","bob@acme.test","nobody@x.test"]')).toEqual([ann, bob]);
    expect(await ids('or(emails.primaryEmail[eq]:bob@acme.test,emails.primaryEmail[like]:"%@other.test")')).toHaveLength(2);
    expect(await ids('not(emails.primaryEmail[ilike]:"%ACME%")')).toHaveLength(1);
    const r = await kit.send('GET', `${rest('people')}?${q('emails.primaryEmail[eq]:bob@acme.test')}`);
    expect(r.json).toMatchObject({ totalCount: 1, pageInfo: { hasNextPage: false, hasPreviousPage: false } });
    expect(r.json.data.people[0]).toMatchObject({ emails: { primaryEmail: 'bob@acme.test', additionalEmails: null }, name: { firstName: '', lastName: '' } });
  });

  it('filters Twenty would refuse are 400s with its texts', async () => {
    const bad = async (filter: string) => {
      const r = await kit.send('GET', `${rest('people')}?${q(filter)}`);
      expect(r.status).toBe(400);
      return r.json.messages[0] as string;
    };
    expect(await bad('emails[eq]:a')).toContain(`doesn't have any "emails" field`);
    expect(await bad('emails.primaryEmail[in]:a@b.test')).toContain('array value expected');
    expect(await bad('emails.primaryEmail[equals]:a')).toContain('comparator equals not in');
    expect(await bad('emails.primaryEmail:a')).toContain("eg: price[gte]:10");
    expect(await bad('nickname[eq]:x')).toContain(`person object doesn't have any "nickname" field`);
  });

  it('cursor pagination: limit, starting_after / ending_before, totalCount; bad cursor and limit are 400s', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e'].map((n) => kit.emu.addPerson({ email: `${n}@acme.test` }));
    const p1 = (await kit.send('GET', `${rest('people')}?limit=2`)).json;
    expect(p1.data.people.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 2));
    expect(p1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(p1.totalCount).toBe(5);
    const p2 = (await kit.send('GET', `${rest('people')}?limit=2&starting_after=${encodeURIComponent(p1.pageInfo.endCursor)}`)).json;
    expect(p2.data.people.map((p: { id: string }) => p.id)).toEqual(ids.slice(2, 4));
    const p3 = (await kit.send('GET', `${rest('people')}?limit=2&starting_after=${encodeURIComponent(p2.pageInfo.endCursor)}`)).json;
    expect(p3.data.people.map((p: { id: string }) => p.id)).toEqual(ids.slice(4));
    expect(p3.pageInfo.hasNextPage).toBe(false);
    const back = (await kit.send('GET', `${rest('people')}?limit=2&ending_before=${encodeURIComponent(p2.pageInfo.startCursor)}`)).json;
    expect(back.data.people.map((p: { id: string }) => p.id)).toEqual(ids.slice(0, 2));
    // Above the maximum is the maximum (60), silently, as Twenty's limit parser does.
    expect((await kit.send('GET', `${rest('people')}?limit=500`)).json.data.people).toHaveLength(5);
    expect((await kit.send('GET', `${rest('people')}?limit=x`)).json.messages[0]).toBe(`limit 'x' is invalid. Should be an integer`);
    expect((await kit.send('GET', `${rest('people')}?starting_after=garbage`)).status).toBe(400);
  });

  it('metadata: objects listed; a custom TEXT field created once (again: 400); before it exists, a create naming it is a 400', async () => {
    const before = await kit.send('POST', rest('notes'), { title: 'x', cadenzaActivityId: 'cadenza:event:1' });
    expect(before.status).toBe(400);
    expect(before.json.messages[0]).toBe(`Object note doesn't have any "cadenzaActivityId" field.`);

    const objects = (await kit.send('GET', `${kit.emu.baseUrl}/rest/metadata/objects`)).json.data.objects;
    expect(objects.map((o: { namePlural: string }) => o.namePlural)).toEqual(['people', 'notes', 'tasks', 'companies', 'workspaceMembers', 'opportunities', 'noteTargets', 'taskTargets']);
    const created = await addExternalIdField(kit.emu, 'note');
    expect(created.status).toBe(201);
    expect(created.json.data.createOneField).toMatchObject({ name: 'cadenzaActivityId', type: 'TEXT', isCustom: true, objectMetadataId: objects[1].id });
    const again = await addExternalIdField(kit.emu, 'note');
    expect(again).toMatchObject({ status: 400, json: { error: 'BadRequestException', messages: ['Field already exists'] } });
    const badType = await kit.send('POST', `${kit.emu.baseUrl}/rest/metadata/fields`, { objectMetadataId: objects[1].id, type: 'TEXT', name: 'Bad Name', label: 'x' });
    expect(badType.status).toBe(400);

    const note = await kit.send('POST', rest('notes'), { title: 'Sent', bodyV2: { markdown: 'Hello' }, cadenzaActivityId: 'cadenza:event:1' });
    expect(note.status).toBe(201);
    expect(note.json.data.createNote).toMatchObject({ title: 'Sent', bodyV2: { markdown: 'Hello', blocknote: null }, cadenzaActivityId: 'cadenza:event:1', createdAt: new Date(T0).toISOString() });
  });

  it('notes, tasks and targets: single and batch creates, the filter on a custom field, validation per field', async () => {
    await addExternalIdField(kit.emu, 'note');
    await addExternalIdField(kit.emu, 'task');
    const person = kit.emu.addPerson({ email: 'p@acme.test' });
    const batch = await kit.send('POST', rest('batch/notes'), [
      { title: 'one', cadenzaActivityId: 'cadenza:event:1' },
      { title: 'two', cadenzaActivityId: 'cadenza:event:2' },
    ]);
    expect(batch.status).toBe(201);
    const [n1, n2] = batch.json.data.createNotes;
    const found = await kit.send('GET', `${rest('notes')}?${q('cadenzaActivityId[in]:["cadenza:event:2","cadenza:event:9"]')}&depth=0`);
    expect(found.json.data.notes.map((n: { id: string }) => n.id)).toEqual([n2.id]);

    expect((await kit.send('POST', rest('batch/noteTargets'), [{ noteId: n1.id, personId: person }, { noteId: n2.id, personId: person }])).json.data.createNoteTargets).toHaveLength(2);
    const targets = await kit.send('GET', `${rest('noteTargets')}?${q(`noteId[in]:[${n1.id},${n2.id}]`)}`);
    expect(targets.json.totalCount).toBe(2);
    // A target pointing at no record: the database's foreign key refuses it.
    const orphan = await kit.send('POST', rest('noteTargets'), { noteId: n1.id, personId: '00000000-0000-4000-8000-0000000fffff' });
    expect(orphan.status).toBe(400);
    expect(orphan.json.messages[0]).toContain('violates foreign key constraint');

    const task = await kit.send('POST', rest('tasks'), { title: 'Call', status: 'DONE', dueAt: '2026-03-02T08:30:00Z', cadenzaActivityId: 'cadenza:call:1' });
    expect(task.json.data.createTask).toMatchObject({ status: 'DONE', dueAt: '2026-03-02T08:30:00.000Z', assigneeId: null });
    expect((await kit.send('POST', rest('tasks'), { title: 'x' })).json.data.createTask.status).toBe('TODO');
    expect((await kit.send('POST', rest('tasks'), { status: 'FINISHED' })).status).toBe(400);
    expect((await kit.send('POST', rest('tasks'), { dueAt: 'not a date' })).json.messages[0]).toBe('invalid input syntax for type timestamp with time zone: "not a date"');
    expect((await kit.send('POST', rest('notes'), { body: 'legacy' })).status).toBe(400);
    expect((await kit.send('POST', rest('notes'), { bodyV2: { html: '<p>' } })).status).toBe(400);
  });

  it('a batch is all or nothing, at most 60 records, and must be a non-empty array', async () => {
    const r = await kit.send('POST', rest('batch/tasks'), [{ title: 'fine' }, { title: 'bad', status: 'NOPE' }]);
    expect(r.status).toBe(400);
    expect(kit.emu.store.records('tasks')).toHaveLength(0);
    expect((await kit.send('POST', rest('batch/tasks'), Array.from({ length: 61 }, () => ({ title: 't' })))).status).toBe(400);
    expect((await kit.send('POST', rest('batch/tasks'), { title: 't' })).json.messages).toEqual(['Body must be an array']);
    expect((await kit.send('POST', rest('batch/tasks'), [])).json.messages).toEqual(['Input must not be empty']);
  });

  it('unknown objects: a singular name gets a hint; objects Twenty has but this emulator does not serve are a loud gap', async () => {
    expect((await kit.send('GET', rest('note'))).json.messages[0]).toBe(`object 'note' not found. Did you mean 'notes'?`);
    expect((await kit.send('GET', rest('attachments'))).json.messages[0]).toContain('not implemented');
  });

  it('rate limit: past the bucket a 429 with the throttler text; tokens come back with time; the highest count per window is kept', async () => {
    const emu = await startTwentyEmulator({ clock: kit.clock, rateLimit: { requests: 3, windowMs: 60_000 } });
    try {
      const key = emu.tokens.issue('workspace');
      const get = () => raw(`${emu.baseUrl}/rest/people`, { authorization: `Bearer ${key}` });
      for (let i = 0; i < 3; i++) expect((await get()).status).toBe(200);
      expect(await get()).toEqual({ status: 429, json: { statusCode: 429, error: 'HttpException', messages: ['Limit reached (3 tokens per 60000 ms)'] } });
      kit.clock.advance(20_000);
      expect((await get()).status).toBe(200);
      expect((await get()).status).toBe(429);
      expect(emu.stats()).toEqual({ requestsByRoute: { 'people.list': 6 }, highestInWindow: 4 });
    } finally {
      await emu.close();
    }
  });

  it('faults: drop after processing stores the note and loses the answer; respond; an outage answers 503 until its end', async () => {
    await addExternalIdField(kit.emu, 'note');
    kit.emu.faults.inject('notes.createMany', { kind: 'drop', after: 'processing' });
    await expect(kit.send('POST', rest('batch/notes'), [{ title: 'kept' }])).rejects.toThrow();
    expect(kit.emu.store.records('notes').map((n) => n.title)).toEqual(['kept']);

    kit.emu.faults.inject('*', { kind: 'respond', ...twentyErrors.tooManyRequests(100, 60_000, { 'retry-after': '7' }) });
    const res = await fetch(rest('people'), { headers: { authorization: `Bearer ${kit.token}` } });
    expect([res.status, res.headers.get('retry-after')]).toEqual([429, '7']);

    kit.emu.outage(T0 + 30_000);
    expect((await kit.send('GET', rest('people'))).status).toBe(503);
    kit.clock.advance(30_000);
    expect((await kit.send('GET', rest('people'))).status).toBe(200);
    expect(kit.emu.faults.pending()).toBe(0);
  });
});
