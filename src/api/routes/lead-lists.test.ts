import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinByInvitation, ownerFixture, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { stopLeadsInBatches, deleteLeadsInBatches, type StopEngine } from '../../leads/lists/bulk-batches.ts';
import { validateDefinition } from '../../sequence/definition.ts';

/**
 * Lists, tags, segments and bulk actions (issue 19). The leads below are written by hand with what
 * each one is (country, tags, enrollment, reply, address check); each segment's members are checked
 * against that table filtered in plain code, not against the SQL that computes them.
 */
interface Spec {
  name: string;
  country: string | null;
  tags: string[];
  /** Its enrollment in the seeded sequence: none, live, or stopped on a reply. */
  enrolled: 'no' | 'active' | 'replied';
  verdict: 'valid' | 'risky' | 'invalid' | null;
}
const SPECS: Spec[] = [
  { name: 'de1', country: 'DE', tags: ['fair'], enrolled: 'no', verdict: 'valid' },
  { name: 'de2', country: 'DE', tags: ['fair', 'vip'], enrolled: 'active', verdict: 'valid' },
  { name: 'de3', country: 'DE', tags: [], enrolled: 'replied', verdict: 'risky' },
  { name: 'de4', country: 'DE', tags: ['vip'], enrolled: 'no', verdict: 'invalid' },
  { name: 'fr1', country: 'FR', tags: ['fair'], enrolled: 'no', verdict: null },
  { name: 'fr2', country: 'FR', tags: [], enrolled: 'replied', verdict: 'valid' },
  { name: 'us1', country: 'US', tags: ['vip'], enrolled: 'active', verdict: 'valid' },
  { name: 'us2', country: 'US', tags: ['fair'], enrolled: 'no', verdict: 'valid' },
  { name: 'xx1', country: null, tags: [], enrolled: 'no', verdict: null },
];
const email = (s: Spec | string) => `${typeof s === 'string' ? s : s.name}@truth.test`;

describe.each(testBackends())('lead lists, tags, segments and bulk actions (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let member: Browser;
  let g: ObjectIds;
  let secondSequence: string;
  const ids = new Map<string, string>();
  const url = (rest: string) => `/api/workspaces/${ws}/${rest}`;
  const bulk = (target: object, action: object, who = owner) => who.call('POST', url('leads/bulk'), { target, action });
  /** The emails GET /leads lists for a query, in order. */
  const listed = async (query: string) => {
    const r = await owner.call('GET', url(`leads?limit=200&${query}`));
    expect(r.statusCode, r.body).toBe(200);
    return r
      .json<{ leads: Array<{ email: string }> }>()
      .leads.map((l) => l.email)
      .filter((e) => e.endsWith('@truth.test'))
      .sort();
  };
  const truth = (keep: (s: Spec) => boolean) => SPECS.filter(keep).map(email).sort();

  beforeAll(async () => {
    ({ h, ws, owner, g } = await ownerFixture(backend));
    member = await joinByInvitation(h.app, owner, ws, 'member@example.test', 'member');
    const random = seededRandom(`lists-${backend}`);
    const db = h.store.db;
    for (const s of SPECS) {
      const id = newId(Date.now(), random);
      ids.set(s.name, id);
      await db
        .insertInto('lead')
        .values({ id, workspace_id: ws, email: email(s), email_norm: email(s), country: s.country, hygiene_verdict: s.verdict, hygiene_review: s.verdict === 'risky' ? 'approved' : null, hygiene_checked_at: s.verdict ? new Date() : null })
        .execute();
      for (const t of s.tags) await db.insertInto('lead_tag').values({ lead_id: id, workspace_id: ws, tag: t }).execute();
    }
    const enrolled = SPECS.filter((s) => s.enrolled !== 'no').map((s) => ids.get(s.name)!);
    await bulkEnroll(h.store, { clock: systemClock, random }, { workspaceId: ws, sequenceId: g.sequenceId!, leadIds: enrolled });
    const replied = SPECS.filter((s) => s.enrolled === 'replied').map((s) => ids.get(s.name)!);
    await sql`update enrollment set state = 'replied' where lead_id = any(${replied}::uuid[])`.execute(db);
    const def = validateDefinition({ key: 'second', name: 'Second', window: 'any', mailboxes: ['rep-a@example.test'], steps: [{ key: 'hi', type: 'email', subject: 'Hi', body: 'Hello' }] });
    secondSequence = (await applyDefinition(h.store, { clock: systemClock, random }, ws, def)).sequenceId;
  }, 60_000);
  afterAll(async () => h?.close());

  it('the leads list filters by tag, enrollment and reply, and shows each lead its tags', async () => {
    expect(await listed('tag=vip')).toEqual(truth((s) => s.tags.includes('vip')));
    expect(await listed('enrolled=false')).toEqual(truth((s) => s.enrolled === 'no'));
    expect(await listed('enrolled=true')).toEqual(truth((s) => s.enrolled !== 'no'));
    expect(await listed('replied=true')).toEqual(truth((s) => s.enrolled === 'replied'));
    expect(await listed('replied=false')).toEqual(truth((s) => s.enrolled !== 'replied'));
    const r = (await owner.call('GET', url('leads?search=de2'))).json<{ leads: Array<{ email: string; tags: string[] }> }>();
    expect(r.leads).toEqual([expect.objectContaining({ email: email('de2'), tags: ['fair', 'vip'] })]);
    expect((await owner.call('GET', url('leads?enrolled=maybe'))).statusCode).toBe(400);
    const tags = (await owner.call('GET', url('lead-tags'))).json<{ tags: Array<{ tag: string; leads: number }> }>();
    expect(tags.tags).toEqual([
      { tag: 'fair', leads: SPECS.filter((s) => s.tags.includes('fair')).length },
      { tag: 'vip', leads: SPECS.filter((s) => s.tags.includes('vip')).length },
    ]);
  });

  it('saved segments match what the hand-written table says', async () => {
    const cases: Array<[object, (s: Spec) => boolean]> = [
      [{ country: 'de' }, (s) => s.country === 'DE'],
      [{ tag: 'fair' }, (s) => s.tags.includes('fair')],
      [{ enrolled: false }, (s) => s.enrolled === 'no'],
      [{ enrolled: true, sequenceId: g.sequenceId }, (s) => s.enrolled !== 'no'],
      [{ replied: true }, (s) => s.enrolled === 'replied'],
      [{ verdict: 'valid' }, (s) => s.verdict === 'valid'],
      [{ verdict: 'unchecked' }, (s) => s.verdict === null],
      [{ country: 'DE', tag: 'fair', enrolled: false }, (s) => s.country === 'DE' && s.tags.includes('fair') && s.enrolled === 'no'],
      [{ tag: 'vip', replied: false, verdict: 'valid' }, (s) => s.tags.includes('vip') && s.enrolled !== 'replied' && s.verdict === 'valid'],
      [{ state: 'active' }, (s) => s.enrolled === 'active'],
    ];
    for (const [i, [filter, keep]] of cases.entries()) {
      const created = await owner.call('POST', url('lead-lists'), { name: `segment ${i}`, kind: 'segment', filter });
      expect(created.statusCode, created.body).toBe(201);
      const seg = created.json<{ id: string; leads: number; kind: string }>();
      const want = truth(keep);
      expect(await listed(`listId=${seg.id}`), JSON.stringify(filter)).toEqual(want);
      // Its size counts the seeded lead of the fixture too when the filter matches it: compare with the list itself.
      const all = (await owner.call('GET', url(`leads?limit=200&listId=${seg.id}`))).json<{ leads: unknown[] }>().leads.length;
      expect(seg.leads).toBe(all);
    }
    // Bad filters are refused in words.
    const bad = await owner.call('POST', url('lead-lists'), { name: 'bad', kind: 'segment', filter: { country: 'Germany' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/ISO 3166-1 alpha-2/);
    expect((await owner.call('POST', url('lead-lists'), { name: 'bad', kind: 'segment', filter: { colour: 'red' } })).statusCode).toBe(400);
    expect((await owner.call('POST', url('lead-lists'), { name: 'segment 0', kind: 'static' })).statusCode).toBe(409);
    // A segment narrows to a static list, not to a segment.
    const lists = (await owner.call('GET', url('lead-lists'))).json<{ lists: Array<{ id: string; kind: string }> }>().lists;
    const nested = await owner.call('POST', url('lead-lists'), { name: 'nested', kind: 'segment', filter: { listId: lists[0]!.id } });
    expect(nested.statusCode).toBe(400);
    expect(nested.json().error.message).toMatch(/not to another segment/);
    // A sequence the workspace does not have (another workspace's, or made up) is refused, not saved as a filter that matches nobody.
    const foreign = '00000000-0000-4000-8000-000000000001';
    const alien = await owner.call('POST', url('lead-lists'), { name: 'alien', kind: 'segment', filter: { enrolled: true, sequenceId: foreign } });
    expect(alien.statusCode).toBe(400);
    expect(alien.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'filter.sequenceId' } });
    expect((await owner.call('PATCH', url(`lead-lists/${lists.find((l) => l.kind === 'segment')!.id}`), { filter: { sequenceId: foreign } })).statusCode).toBe(400);
    expect((await bulk({ filter: { sequenceId: foreign } }, { kind: 'tag', tag: 'x' })).statusCode).toBe(400);
  });

  it('a segment by custom field and activity: counted, listed, the target of a bulk action; the picker offers the custom keys; a wrong condition is refused in words', async () => {
    const db = h.store.db;
    await sql`update lead set custom = '{"industry": "SaaS"}'::jsonb where id = any(${[ids.get('de1')!, ids.get('us1')!]}::uuid[])`.execute(db);
    await sql`update lead set custom = '{"industry": "Retail", "size": "9"}'::jsonb where id = ${ids.get('fr1')!}`.execute(db);
    const keys = await owner.call('GET', url('lead-fields'));
    expect(keys.statusCode, keys.body).toBe(200);
    expect(keys.json()).toEqual({ custom: [{ key: 'industry', leads: 3 }, { key: 'size', leads: 1 }] });
    const filter = { fields: [{ field: 'custom', key: 'industry', op: 'equals', value: 'saas' }], activity: [{ event: 'contacted', when: 'never' }, { event: 'opened', when: 'never' }] };
    const created = await owner.call('POST', url('lead-lists'), { name: 'SaaS, never contacted', kind: 'segment', filter });
    expect(created.statusCode, created.body).toBe(201);
    const seg = created.json<{ id: string; leads: number; filter: unknown }>();
    expect(seg).toMatchObject({ leads: 2, filter });
    expect(await listed(`listId=${seg.id}`)).toEqual([email('de1'), email('us1')]);
    // A bulk action's target: the filter with a country, resolved to us1 alone (untagging a tag nobody has changes nothing).
    expect((await bulk({ filter: { ...filter, country: 'US' } }, { kind: 'untag', tag: 'nobody' })).json()).toEqual({ leads: 1, changed: 0 });
    const bad = await owner.call('PATCH', url(`lead-lists/${seg.id}`), { filter: { fields: [{ field: 'custom', op: 'set' }] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/name the custom field/);
    expect((await owner.call('DELETE', url(`lead-lists/${seg.id}`))).statusCode).toBe(200);
    await sql`update lead set custom = '{}'::jsonb where workspace_id = ${ws}`.execute(db);
  });

  it('static lists: add and remove picked leads, a segment over a list, and a segment cannot be added to', async () => {
    const list = (await owner.call('POST', url('lead-lists'), { name: 'Fair 2026', kind: 'static' })).json<{ id: string; leads: number }>();
    expect(list.leads).toBe(0);
    const picked = ['de1', 'fr1', 'us2', 'xx1'].map((n) => ids.get(n)!);
    const add = await bulk({ leadIds: picked }, { kind: 'add_to_list', listId: list.id });
    expect(add.json()).toEqual({ leads: 4, changed: 4 });
    expect((await bulk({ leadIds: picked.slice(0, 2) }, { kind: 'add_to_list', listId: list.id })).json()).toEqual({ leads: 2, changed: 0 });
    expect(await listed(`listId=${list.id}`)).toEqual(['de1', 'fr1', 'us2', 'xx1'].map(email).sort());
    expect((await bulk({ leadIds: [ids.get('xx1')!] }, { kind: 'remove_from_list', listId: list.id })).json()).toEqual({ leads: 1, changed: 1 });
    // A lead's page names its lists and tags.
    expect((await owner.call('GET', url(`leads/${ids.get('de1')}`))).json()).toMatchObject({ tags: ['fair'], lists: [{ id: list.id, name: 'Fair 2026' }] });
    // A segment narrowed to the list: its members from DE or FR.
    const seg = (await owner.call('POST', url('lead-lists'), { name: 'Fair EU', kind: 'segment', filter: { listId: list.id, tag: 'fair', country: 'DE' } })).json<{ id: string }>();
    expect(await listed(`listId=${seg.id}`)).toEqual([email('de1')]);
    const refused = await bulk({ leadIds: picked }, { kind: 'add_to_list', listId: seg.id });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.message).toMatch(/is a segment/);
    // Another workspace's or a made-up lead id is dropped, not acted on.
    expect((await bulk({ leadIds: ['00000000-0000-4000-8000-000000000001'] }, { kind: 'add_to_list', listId: list.id })).json()).toEqual({ leads: 0, changed: 0 });
    expect((await bulk({ listId: '00000000-0000-4000-8000-000000000001' }, { kind: 'tag', tag: 'x' })).statusCode).toBe(404);
    // Renamed; deleted, its leads stay.
    expect((await owner.call('PATCH', url(`lead-lists/${list.id}`), { name: 'Fair leads' })).json()).toMatchObject({ name: 'Fair leads', leads: 3 });
    expect((await owner.call('PATCH', url(`lead-lists/${list.id}`), { filter: { country: 'DE' } })).statusCode).toBe(400);
    expect((await owner.call('DELETE', url(`lead-lists/${seg.id}`))).statusCode).toBe(200);
    expect((await owner.call('DELETE', url(`lead-lists/${seg.id}`))).statusCode).toBe(404);
  });

  it('a static list that segments select from is not deleted: 409 naming them; once they are gone, it is', async () => {
    const list = (await owner.call('POST', url('lead-lists'), { name: 'Trade show', kind: 'static' })).json<{ id: string }>();
    await bulk({ leadIds: [ids.get('de1')!] }, { kind: 'add_to_list', listId: list.id });
    const a = (await owner.call('POST', url('lead-lists'), { name: 'Show, Germany', kind: 'segment', filter: { listId: list.id, country: 'DE' } })).json<{ id: string }>();
    const b = (await owner.call('POST', url('lead-lists'), { name: 'Show, VIP', kind: 'segment', filter: { listId: list.id, tag: 'vip' } })).json<{ id: string }>();
    const refused = await owner.call('DELETE', url(`lead-lists/${list.id}`));
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toMatchObject({
      code: 'CONFLICT',
      message: '“Trade show” is used by 2 segments: “Show, Germany”, “Show, VIP”: change or delete them first, or it would match nobody',
      details: { segments: [{ id: a.id, name: 'Show, Germany' }, { id: b.id, name: 'Show, VIP' }] },
    });
    // Still there, and its segment still finds its member.
    expect(await listed(`listId=${a.id}`)).toEqual([email('de1')]);
    expect((await owner.call('DELETE', url(`lead-lists/${a.id}`))).statusCode).toBe(200);
    expect((await owner.call('DELETE', url(`lead-lists/${list.id}`))).json().error.message).toBe('“Trade show” is used by the segment “Show, VIP”: change or delete it first, or it would match nobody');
    // A segment that stops naming the list frees it.
    expect((await owner.call('PATCH', url(`lead-lists/${b.id}`), { filter: { tag: 'vip' } })).statusCode).toBe(200);
    expect((await owner.call('DELETE', url(`lead-lists/${list.id}`))).statusCode).toBe(200);
    expect((await owner.call('DELETE', url(`lead-lists/${list.id}`))).statusCode).toBe(404);
    expect((await owner.call('DELETE', url(`lead-lists/${b.id}`))).statusCode).toBe(200);
  });

  it('bulk tag and untag a segment; export a segment as CSV with tags', async () => {
    const seg = (await owner.call('POST', url('lead-lists'), { name: 'Germans', kind: 'segment', filter: { country: 'DE' } })).json<{ id: string }>();
    const tagged = await bulk({ listId: seg.id }, { kind: 'tag', tag: 'germany' });
    expect(tagged.json()).toEqual({ leads: 4, changed: 4 });
    expect(await listed('tag=germany')).toEqual(truth((s) => s.country === 'DE'));
    expect((await bulk({ filter: { country: 'DE', tag: 'vip' } }, { kind: 'untag', tag: 'germany' })).json()).toEqual({ leads: 2, changed: 2 });
    expect(await listed('tag=germany')).toEqual([email('de1'), email('de3')]);
    expect((await bulk({ listId: seg.id }, { kind: 'tag', tag: '   ' })).statusCode).toBe(400);

    const csv = await owner.call('POST', url('leads/export'), { target: { listId: seg.id } });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('email,first_name,last_name,company,title,phone,country,time_zone,tags');
    expect(lines.slice(1).sort()).toEqual([`${email('de1')},,,,,,DE,,fair;germany`, `${email('de2')},,,,,,DE,,fair;vip`, `${email('de3')},,,,,,DE,,germany`, `${email('de4')},,,,,,DE,,vip`]);
    const log = await h.store.db.selectFrom('audit_event').select(['target', 'detail']).where('workspace_id', '=', ws).where('action', '=', 'export.downloaded').where('target', '=', 'leads.csv').execute();
    expect(log).toEqual([{ target: 'leads.csv', detail: { rows: 4, target: { listId: seg.id } } }]);
  });

  it('enrolls a segment through the enroll path, with each refusal and its reason; stops a list', async () => {
    // The fair tag, not enrolled anywhere: de1, fr1, us2 (fr1 made suppressed, us2's address found invalid).
    await owner.call('POST', url('suppressions'), { email: email('fr1') });
    await h.store.db.updateTable('lead').set({ hygiene_verdict: 'invalid' }).where('id', '=', ids.get('us2')!).execute();
    const seg = (await owner.call('POST', url('lead-lists'), { name: 'Fair, not enrolled', kind: 'segment', filter: { tag: 'fair', enrolled: false } })).json<{ id: string }>();
    const r = await bulk({ listId: seg.id }, { kind: 'enroll', sequenceId: secondSequence });
    expect(r.statusCode, r.body).toBe(200);
    const out = r.json<{ leads: number; changed: number; enroll: { enrolled: number; invalid: number; refused: Array<{ leadId: string; reason: string }> } }>();
    expect(out).toMatchObject({ leads: 3, changed: 1, enroll: { enrolled: 1, invalid: 1 } });
    expect(out.enroll.refused.map((x) => [x.leadId, x.reason]).sort()).toEqual(
      [
        [ids.get('fr1')!, 'suppressed'],
        [ids.get('us2')!, 'invalid_address'],
      ].sort(),
    );
    // Enrolled now, de1 has left the segment: enrolling it again finds only the two refused.
    expect((await bulk({ listId: seg.id }, { kind: 'enroll', sequenceId: secondSequence })).json()).toMatchObject({ leads: 2, changed: 0 });
    // Picked again directly, de1 is refused as already enrolled.
    const again = (await bulk({ leadIds: [ids.get('de1')!] }, { kind: 'enroll', sequenceId: secondSequence })).json<{ enroll: { refused: Array<{ reason: string }> } }>();
    expect(again.enroll.refused.map((x) => x.reason)).toEqual(['already_enrolled']);
    expect((await bulk({ listId: seg.id }, { kind: 'enroll', sequenceId: '00000000-0000-4000-8000-000000000001' })).statusCode).toBe(404);

    // Stop: the live enrollments of de1 (second sequence) and de2 (first), not de3's replied one.
    const stop = await bulk({ filter: { country: 'DE' } }, { kind: 'stop' });
    expect(stop.json()).toEqual({ leads: 4, changed: 2, tasksCancelled: 0 });
    const states = await h.store.db
      .selectFrom('enrollment as e')
      .innerJoin('lead as l', 'l.id', 'e.lead_id')
      .select(['l.email', 'e.state'])
      .where('l.country', '=', 'DE')
      .orderBy('l.email')
      .execute();
    expect(states).toEqual([
      { email: email('de1'), state: 'stopped' },
      { email: email('de2'), state: 'stopped' },
      { email: email('de3'), state: 'replied' },
    ]);
  });

  /** New leads of their own country (no other test's filter matches them), enrolled in the seeded sequence. */
  const enrolledLeads = async (country: string, names: string[]) => {
    const random = seededRandom(`${country}-${backend}`);
    const made = names.map(() => newId(Date.now(), random));
    for (const [i, id] of made.entries()) await h.store.db.insertInto('lead').values({ id, workspace_id: ws, email: `${names[i]}@${country}.test`, email_norm: `${names[i]}@${country}.test`, country }).execute();
    await bulkEnroll(h.store, { clock: systemClock, random }, { workspaceId: ws, sequenceId: g.sequenceId!, leadIds: made });
    const enr = await h.store.db.selectFrom('enrollment').select(['id', 'lead_id']).where('lead_id', 'in', made).execute();
    return made.map((id) => enr.find((e) => e.lead_id === id)!.id);
  };
  const openTask = async (enrollmentId: string, kind: 'call' | 'manual') => {
    const step = await h.store.db.selectFrom('step').select('id').where('sequence_id', '=', g.sequenceId!).executeTakeFirstOrThrow();
    const id = newId(Date.now(), seededRandom(enrollmentId));
    await h.store.db.insertInto('task').values({ id, workspace_id: ws, enrollment_id: enrollmentId, step_id: step.id, kind, title: `${kind} them`, due_at: new Date() }).execute();
    return id;
  };
  const auditOf = (action: string) => h.store.db.selectFrom('audit_event').select(['actor_label', 'target', 'detail']).where('workspace_id', '=', ws).where('action', '=', action).orderBy('at').orderBy('id').execute();

  it('bulk stop closes the open tasks of the enrollments it stops and of a finished one that still holds a call; one audit entry', async () => {
    const [live, finished, bare] = await enrolledLeads('ZS', ['live', 'finished', 'bare']);
    await h.store.db.updateTable('enrollment').set({ state: 'finished', due_at: null }).where('id', '=', finished!).execute();
    const tasks = [await openTask(live!, 'manual'), await openTask(finished!, 'call')];
    const earlier = (await auditOf('leads.bulk_stopped')).length;
    const stop = await bulk({ filter: { country: 'ZS' } }, { kind: 'stop' });
    expect(stop.json()).toEqual({ leads: 3, changed: 2, tasksCancelled: 2 });
    expect((await h.store.db.selectFrom('task').select('state').where('id', 'in', tasks).execute()).map((t) => t.state)).toEqual(['cancelled', 'cancelled']);
    const states = await h.store.db.selectFrom('enrollment').select(['id', 'state']).where('id', 'in', [live!, finished!, bare!]).execute();
    expect(Object.fromEntries(states.map((e) => [e.id, e.state]))).toEqual({ [live!]: 'stopped', [finished!]: 'finished', [bare!]: 'stopped' });
    const log = (await auditOf('leads.bulk_stopped')).slice(earlier);
    expect(log).toEqual([{ actor_label: expect.stringContaining('@'), target: '3 leads', detail: { target: { filter: expect.objectContaining({ country: 'ZS' }) }, leads: 3, stopped: 2, tasksCancelled: 2, batches: 1 } }]);
    // Again: nothing left to stop or close; a second entry says so.
    expect((await bulk({ filter: { country: 'ZS' } }, { kind: 'stop' })).json()).toEqual({ leads: 3, changed: 0, tasksCancelled: 0 });
    expect((await auditOf('leads.bulk_stopped')).slice(earlier).map((e) => (e.detail as { stopped: number }).stopped)).toEqual([2, 0]);
  });

  it('a bulk stop and delete go in batches, each its own transaction: a failed batch leaves the ones before it done, and a retry finishes the rest', async () => {
    const enr = await enrolledLeads('ZB', ['b1', 'b2', 'b3', 'b4', 'b5']);
    const leads = (await h.store.db.selectFrom('enrollment').select(['id', 'lead_id']).where('id', 'in', enr).execute()).map((e) => ({ e: e.id, l: e.lead_id }));
    leads.sort((a, b) => enr.indexOf(a.e) - enr.indexOf(b.e));
    const service = new EnrollmentService({ store: h.store, clock: systemClock, random: seededRandom('batches') });
    let calls = 0;
    const failing: StopEngine = {
      stopEachInTx: async (tx, ids, reason, now) => {
        if (++calls === 2) throw new Error('the database went away');
        return service.stopEachInTx(tx, ids, reason, now);
      },
      notify: (a) => service.notify(a),
    };
    const leadIds = leads.map((x) => x.l);
    const progress = { batches: 0, stopped: 0, tasksCancelled: 0 };
    await expect(stopLeadsInBatches(h.store.db, failing, ws, leadIds, { reason: 'test', now: Date.now(), batch: 2, progress })).rejects.toThrow(/went away/);
    // What the audit log is told: the committed batch, not the one rolled back.
    expect(progress).toEqual({ batches: 1, stopped: 2, tasksCancelled: 0 });
    const stateOf = async () => (await h.store.db.selectFrom('enrollment').select(['id', 'state']).where('id', 'in', enr).execute()).sort((a, b) => enr.indexOf(a.id) - enr.indexOf(b.id)).map((e) => e.state);
    // The first batch committed; the second rolled back; the third never ran.
    expect(await stateOf()).toEqual(['stopped', 'stopped', 'active', 'active', 'active']);
    const retried = await stopLeadsInBatches(h.store.db, service, ws, leadIds, { reason: 'test', now: Date.now(), batch: 2 });
    expect(retried).toEqual({ batches: 3, stopped: 3, tasksCancelled: 0 });
    expect(await stateOf()).toEqual(['stopped', 'stopped', 'stopped', 'stopped', 'stopped']);

    const deleted = await deleteLeadsInBatches(h.store.db, ws, leadIds.slice(0, 3), { batch: 2 });
    expect(deleted).toEqual({ batches: 2, deleted: 3 });
    expect(await deleteLeadsInBatches(h.store.db, ws, leadIds, { batch: 2 })).toEqual({ batches: 3, deleted: 2 });
    expect(await h.store.db.selectFrom('lead').select('id').where('id', 'in', leadIds).execute()).toEqual([]);
  });

  it('delete is for admins; a member may tag; the leads go from their lists', async () => {
    const list = (await owner.call('POST', url('lead-lists'), { name: 'To delete', kind: 'static' })).json<{ id: string }>();
    await bulk({ leadIds: [ids.get('xx1')!, ids.get('us1')!] }, { kind: 'add_to_list', listId: list.id });
    const refused = await bulk({ listId: list.id }, { kind: 'delete' }, member);
    expect(refused.statusCode).toBe(403);
    expect((await bulk({ listId: list.id }, { kind: 'tag', tag: 'member-was-here' }, member)).json()).toEqual({ leads: 2, changed: 2 });
    expect((await bulk({ listId: list.id }, { kind: 'delete' })).json()).toEqual({ leads: 2, changed: 2 });
    expect(await auditOf('leads.bulk_deleted')).toEqual([{ actor_label: expect.stringContaining('@'), target: '2 leads', detail: { target: { listId: list.id }, leads: 2, deleted: 2, batches: 1 } }]);
    expect(await h.store.db.selectFrom('lead').select('id').where('id', 'in', [ids.get('xx1')!, ids.get('us1')!]).execute()).toEqual([]);
    expect(await h.store.db.selectFrom('lead_list_member').select('lead_id').where('list_id', '=', list.id).execute()).toEqual([]);
    expect(await h.store.db.selectFrom('lead_tag').select('tag').where('tag', '=', 'member-was-here').execute()).toEqual([]);
    expect((await owner.call('GET', url('lead-lists'))).json<{ lists: Array<{ name: string; leads: number }> }>().lists.find((l) => l.name === 'To delete')).toMatchObject({ leads: 0 });
  });

  it('a person erased leaves every list and loses their tags; the export lists both first', async () => {
    const list = (await owner.call('POST', url('lead-lists'), { name: 'Erasure check', kind: 'static' })).json<{ id: string }>();
    const fr2 = ids.get('fr2')!;
    await bulk({ leadIds: [fr2] }, { kind: 'add_to_list', listId: list.id });
    await bulk({ leadIds: [fr2] }, { kind: 'tag', tag: 'to-forget' });
    const exported = (await owner.call('POST', url('privacy/export'), { email: email('fr2') })).json<{ sections: Record<string, unknown[]> }>();
    expect(exported.sections.lead_lists).toEqual([expect.objectContaining({ lead_id: fr2, list: 'Erasure check' })]);
    expect(exported.sections.lead_tags).toEqual([expect.objectContaining({ lead_id: fr2, tag: 'to-forget' })]);
    const erased = await owner.call('POST', url('privacy/erase'), { email: email('fr2'), confirm: true });
    expect(erased.statusCode, erased.body).toBe(200);
    expect(await h.store.db.selectFrom('lead_list_member').select('lead_id').where('lead_id', '=', fr2).execute()).toEqual([]);
    expect(await h.store.db.selectFrom('lead_tag').select('tag').where('lead_id', '=', fr2).execute()).toEqual([]);
    expect((await owner.call('GET', url('lead-lists'))).json<{ lists: Array<{ id: string; leads: number }> }>().lists.find((l) => l.id === list.id)).toMatchObject({ leads: 0 });
  });
});
