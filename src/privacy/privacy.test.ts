import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinByInvitation, ownerFixture, type ApiHarness, type Browser, type ObjectIds } from '../../test/api.ts';
import { testBackends } from '../../test/stores.ts';
import type { Db } from '../store/store.ts';
import { ADDRESS_COLUMNS_ELSEWHERE, PERSONAL_TABLES } from './sql/personal-data.ts';

const ADDRESS = 'lead-a@prospects.test';
// A neighbour whose address contains the subject's: never touched by the erasure.
const NEIGHBOUR = 'xlead-a@prospects.test';

/** Every text-like column of every table that holds `needle` (case-insensitive) other than inside the neighbour's address. */
async function holders(db: Db, needle: string): Promise<string[]> {
  const cols = (
    await sql<{ table_name: string; column_name: string; data_type: string }>`
      select c.table_name, c.column_name, c.data_type
        from information_schema.columns c join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
       where c.table_schema = 'public' and t.table_type = 'BASE TABLE'
         and c.data_type in ('text', 'character varying', 'jsonb', 'json', 'ARRAY', 'bytea')`.execute(db)
  ).rows;
  const found: string[] = [];
  for (const c of cols) {
    const expr = c.data_type === 'bytea' ? sql`encode(${sql.ref(c.column_name)}, 'escape')` : sql`${sql.ref(c.column_name)}::text`;
    const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(c.table_name)} where position(${needle} in replace(lower(${expr}), ${NEIGHBOUR}, '')) > 0`.execute(db);
    if (r.rows[0]!.n > 0) found.push(`${c.table_name}.${c.column_name}`);
  }
  return found;
}

describe('personal data registry', () => {
  it.each(testBackends())('covers every column named like an address (%s)', async (backend) => {
    const { h } = await ownerFixture(backend);
    try {
      const cols = (
        await sql<{ table_name: string; column_name: string }>`
          select c.table_name, c.column_name from information_schema.columns c
            join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
           where c.table_schema = 'public' and t.table_type = 'BASE TABLE' and c.column_name ~ '(email|addr|login_hint|recipient)'`.execute(h.store.db)
      ).rows.map((r) => `${r.table_name}.${r.column_name}`);
      expect(cols.length).toBeGreaterThan(5);
      const covered = new Set(PERSONAL_TABLES.flatMap((t) => t.addressColumns.map((c) => `${t.table}.${c}`)));
      const missing = cols.filter((c) => !covered.has(c) && !(c in ADDRESS_COLUMNS_ELSEWHERE));
      // A new table or column holding an address: list it in src/privacy/sql/personal-data.ts.
      expect(missing).toEqual([]);
      // And nothing listed that the schema does not have.
      const all = new Set((await sql<{ c: string }>`select table_name || '.' || column_name as c from information_schema.columns where table_schema = 'public'`.execute(h.store.db)).rows.map((r) => r.c));
      expect([...covered, ...Object.keys(ADDRESS_COLUMNS_ELSEWHERE)].filter((c) => !all.has(c))).toEqual([]);
    } finally {
      await h.close();
    }
  }, 60_000);
});

describe.each(testBackends())('subject access export and erasure (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let g: ObjectIds;

  beforeAll(async () => {
    ({ h, ws, owner, g } = await ownerFixture(backend));
    const db = h.store.db;
    const now = new Date();
    // The person's data in every other place it can be: journal, clicks, webhooks, import rejects, quarantine, audit.
    await db.insertInto('event').values({ workspace_id: ws, enrollment_id: null, type: 'note', payload: JSON.stringify({ email: ADDRESS }), at: now }).execute();
    await db.insertInto('event').values({ workspace_id: ws, enrollment_id: g.enrollmentId!, type: 'step_sent', payload: '{}', at: now }).execute();
    await db.insertInto('tracking_event').values({ workspace_id: ws, enrollment_id: g.enrollmentId!, kind: 'click', url: 'https://acme.test/p', at: now }).execute();
    const ep = '00000000-0000-4000-8000-0000000000e1';
    await db.insertInto('webhook_endpoint').values({ id: ep, workspace_id: ws, url: 'https://hooks.test/x', events: ['reply'], legacy_secret: 's' }).execute();
    await db.insertInto('webhook_delivery').values({ endpoint_id: ep, workspace_id: ws, event_id: 'e1', event_type: 'reply', payload: JSON.stringify({ email: ADDRESS }), next_attempt_at: now }).execute();
    const imp = '00000000-0000-4000-8000-0000000000e2';
    await db.insertInto('lead_import').values({ id: imp, workspace_id: ws, on_duplicate: 'skip', status: 'done' }).execute();
    await db.insertInto('lead_import_reject').values({ import_id: imp, workspace_id: ws, line: 2, reason: 'duplicate', message: 'dup', raw: `${ADDRESS.toUpperCase()};Ann` }).execute();
    await db.insertInto('quarantine').values({ id: '00000000-0000-4000-8000-0000000000e3', workspace_id: ws, mailbox_id: g.mailboxId!, provider_key: 'q1', reason: 'too large', raw: Buffer.from(`From: Ann <${ADDRESS}>\r\n\r\n\xff`, 'latin1'), at: now }).execute();
    await db.insertInto('audit_event').values({ id: '00000000-0000-4000-8000-0000000000e4', workspace_id: ws, at: now, action: 'export.downloaded', actor_kind: 'system', actor_label: 'Cadenza', target: `lead ${ADDRESS}`, detail: '{}' }).execute();
    await db.insertInto('lead').values({ id: '00000000-0000-4000-8000-0000000000e5', workspace_id: ws, email: NEIGHBOUR, email_norm: NEIGHBOUR }).execute();
    // What a CRM connection read of the person (0055): the mirrored contact, a deal naming them and
    // their neighbour, a conflict on their record, and the list that enrolled them.
    const crm = '00000000-0000-4000-8000-0000000000e6';
    await db.insertInto('crm_connection').values({ id: crm, workspace_id: ws, kind: 'hubspot', base_url: 'http://127.0.0.1:1', credentials: Buffer.from('sealed') }).execute();
    await db.insertInto('crm_contact').values({ connection_id: crm, workspace_id: ws, crm_id: '51001', email: ADDRESS, lead_id: g.leadId!, fields: JSON.stringify({ email: ADDRESS, firstName: 'Ann' }), updated_at: now }).execute();
    await db.insertInto('crm_deal').values({ connection_id: crm, workspace_id: ws, crm_id: '51002', name: 'Pilot', stage: 'appointmentscheduled', contact_emails: [ADDRESS, NEIGHBOUR], owner_email: null, created_at: now, updated_at: now }).execute();
    await db.insertInto('crm_conflict').values({ connection_id: crm, workspace_id: ws, crm_id: '51001', email: ADDRESS, field: 'cadenzaSequenceStatus', crm_value: 'x', cadenza_value: 'active', crm_updated_at: now }).execute();
    const le = '00000000-0000-4000-8000-0000000000e7';
    await db.insertInto('crm_list_enrollment').values({ id: le, connection_id: crm, workspace_id: ws, list_id: '1', list_name: 'Q1', sequence_id: g.sequenceId!, mode: 'once' }).execute();
    await db.insertInto('crm_list_member').values({ list_enrollment_id: le, crm_id: '51001', lead_id: g.leadId!, outcome: 'enrolled' }).execute();
    // The inbox (0086): a note on the person's reply, a note on someone else's that names them, one
    // that does not, and a saved view that searches for them.
    const me = await db.selectFrom('app_user').select('id').where('workspace_id', '=', ws).executeTakeFirstOrThrow();
    const other = '00000000-0000-4000-8000-0000000000e8';
    await db.insertInto('message').values({ id: other, workspace_id: ws, mailbox_id: g.mailboxId!, direction: 'inbound', message_id: '<other@t>', from_addr: 'bo@elsewhere.test', subject: 'Hello', at: now }).execute();
    const note = (id: string, message: string, body: string) => ({ id, workspace_id: ws, message_id: message, author_user_id: me.id, body, created_at: now });
    await db.insertInto('inbox_note').values([note('00000000-0000-4000-8000-0000000000f1', g.messageId!, 'Call after Easter'), note('00000000-0000-4000-8000-0000000000f2', other, `Bo's colleague ${ADDRESS} is the buyer`), note('00000000-0000-4000-8000-0000000000f3', other, 'Bo wants a demo')]).execute();
    await db.insertInto('inbox_view').values({ id: '00000000-0000-4000-8000-0000000000f4', workspace_id: ws, user_id: me.id, name: 'Ann', filters: JSON.stringify({ q: ADDRESS }), created_at: now }).execute();
  }, 60_000);
  afterAll(async () => h?.close());

  it('exports every place the address is stored, never a credential; a member may not', async () => {
    const r = await owner.call('POST', `/api/workspaces/${ws}/privacy/export`, { email: 'Lead-A@Prospects.test' });
    expect(r.statusCode).toBe(200);
    const x = r.json<{ email: string; erased: boolean; sections: Record<string, unknown[]> }>();
    expect(x.email).toBe(ADDRESS);
    expect(x.erased).toBe(false);
    for (const s of ['leads', 'enrollments', 'tasks', 'messages', 'events', 'opens_clicks_unsubscribes', 'webhook_deliveries', 'import_rejects', 'quarantined_messages', 'audit_log']) {
      expect(x.sections[s]?.length, s).toBeGreaterThan(0);
    }
    expect(x.sections.events!.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(x)).not.toContain(NEIGHBOUR);
    expect(JSON.stringify(x)).not.toMatch(/ciphertext|password|token_hash|wrapped_key/);
    const csv = await owner.call('GET', `/api/workspaces/${ws}/privacy/export?email=${encodeURIComponent(ADDRESS)}&format=csv&section=leads`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.body.split('\r\n')[0]).toContain('email_norm');
    expect(csv.body).toContain(ADDRESS);
    expect((await owner.call('GET', `/api/workspaces/${ws}/privacy/export?email=${encodeURIComponent(ADDRESS)}&format=csv`)).statusCode).toBe(400);
    const member = await joinByInvitation(h.app, owner, ws, 'member@example.test', 'member');
    expect((await member.call('POST', `/api/workspaces/${ws}/privacy/export`, { email: ADDRESS })).statusCode).toBe(403);
    expect((await member.call('POST', `/api/workspaces/${ws}/privacy/erase`, { email: ADDRESS, confirm: true })).statusCode).toBe(403);
    // The audit log names the export by the keyed hash, not the address.
    const log = await h.store.db.selectFrom('audit_event').select(['target']).where('workspace_id', '=', ws).where('action', '=', 'privacy.exported').execute();
    expect(log.length).toBe(2);
    for (const e of log) expect(e.target).toMatch(/^erased:[0-9a-f]{64}$/);
  });

  it("erasure refuses the workspace's own addresses and a bad address", async () => {
    const r = await owner.call('POST', `/api/workspaces/${ws}/privacy/erase`, { email: 'rep-a@example.test', confirm: true });
    expect(r.statusCode).toBe(409);
    expect(r.json().error.details).toMatchObject({ section: 'mailboxes' });
    expect((await owner.call('POST', `/api/workspaces/${ws}/privacy/erase`, { email: 'not an address', confirm: true })).statusCode).toBe(400);
    expect((await owner.call('POST', `/api/workspaces/${ws}/privacy/erase`, { email: ADDRESS })).statusCode).toBe(400);
  });

  it('erases: enrollments stopped first, the address nowhere in the database, a keyed hash refuses it again', async () => {
    expect(await holders(h.store.db, ADDRESS)).not.toEqual([]);
    const r = await owner.call('POST', `/api/workspaces/${ws}/privacy/erase`, { email: ADDRESS, confirm: true });
    expect(r.statusCode).toBe(200);
    const e = r.json<{ marker: string; stopped: number; deleted: Record<string, number> }>();
    expect(e.marker).toMatch(/^erased:[0-9a-f]{64}$/);
    expect(e.stopped).toBe(1);
    expect(e.deleted).toMatchObject({ leads: 1, messages: 1, webhook_deliveries: 1, import_rejects: 1, quarantined_messages: 1, audit_log: 1, crm_contacts: 1, crm_deals: 1, crm_conflicts: 1, inbox_notes: 2, inbox_views: 1 });
    expect(await h.store.db.selectFrom('inbox_note').select('body').execute()).toEqual([{ body: 'Bo wants a demo' }]);
    // The deal stays the company's, without the person; the neighbour's address stays on it.
    expect(await h.store.db.selectFrom('crm_deal').select('contact_emails').execute()).toEqual([{ contact_emails: [NEIGHBOUR] }]);
    expect(await h.store.db.selectFrom('crm_list_member').selectAll().execute()).toEqual([]);
    expect(await holders(h.store.db, ADDRESS)).toEqual([]);
    expect(await h.store.db.selectFrom('enrollment').select('id').where('id', '=', g.enrollmentId!).execute()).toEqual([]);
    const sup = await h.store.db.selectFrom('suppression').select(['email_norm', 'reason']).where('workspace_id', '=', ws).where('reason', '=', 'erased').execute();
    expect(sup).toEqual([{ email_norm: e.marker, reason: 'erased' }]);
    // The neighbour is untouched.
    expect(await h.store.db.selectFrom('lead').select('id').where('email_norm', '=', NEIGHBOUR).execute()).toHaveLength(1);

    // Imported again, created again, or given to another lead: refused, and still stored nowhere.
    const imp = await owner.call('POST', `/api/workspaces/${ws}/leads/import`, { csv: `email,first_name\n${ADDRESS.toUpperCase()},Ann\nnew@prospects.test,New\n` });
    expect(imp.statusCode).toBe(200);
    expect(imp.json()).toMatchObject({ imported: 1, rejected: 1, rejectsByReason: { erased: 1 } });
    const created = await owner.call('POST', `/api/workspaces/${ws}/leads`, { email: ADDRESS });
    expect(created.statusCode).toBe(409);
    expect(created.json().error.code).toBe('SUPPRESSED');
    const moved = await owner.call('PATCH', `/api/workspaces/${ws}/leads/00000000-0000-4000-8000-0000000000e5`, { email: ADDRESS });
    expect(moved.statusCode).toBe(409);
    expect(await holders(h.store.db, ADDRESS)).toEqual([]);

    // The export now says erased, with nothing else.
    const x = (await owner.call('POST', `/api/workspaces/${ws}/privacy/export`, { email: ADDRESS })).json<{ erased: boolean; sections: Record<string, unknown[]> }>();
    expect(x.erased).toBe(true);
    expect(Object.values(x.sections).every((s) => s.length === 0)).toBe(true);
    const log = await h.store.db.selectFrom('audit_event').select(['target', 'detail']).where('workspace_id', '=', ws).where('action', '=', 'privacy.erased').execute();
    expect(log).toHaveLength(1);
    expect(log[0]!.target).toBe(e.marker);
  });

  it("retention: members read it with the last purge's counts of their own workspace only; admins change it", async () => {
    const url = `/api/workspaces/${ws}/privacy/retention`;
    const other = '00000000-0000-4000-8000-0000000000f1';
    await h.store.db
      .insertInto('privacy_purge_day')
      .values({ day: '2026-03-10', started_at: new Date('2026-03-10T02:00:00Z'), finished_at: new Date('2026-03-10T02:01:00Z'), counts: JSON.stringify({ messages: 7 }), workspace_counts: JSON.stringify({ [ws]: { messages: 2 }, [other]: { messages: 5 } }) })
      .execute();
    const member = await joinByInvitation(h.app, owner, ws, 'reader@example.test', 'member');
    const read = await member.call('GET', url);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({ messageBodiesDays: null, messagesDays: null, eventsDays: null, importRejectsDays: null, unmatchedCallsDays: null, lastPurge: { day: '2026-03-10', finishedAt: '2026-03-10T02:01:00.000Z', counts: { messages: 2 } } });
    expect((await member.call('PATCH', url, { eventsDays: 90 })).statusCode).toBe(403);
    const changed = await owner.call('PATCH', url, { messageBodiesDays: 30, messagesDays: 365, eventsDays: null });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ messageBodiesDays: 30, messagesDays: 365, eventsDays: null, importRejectsDays: null });
    const refused = await owner.call('PATCH', url, { messageBodiesDays: 400 });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.message).toContain('cannot be longer than messagesDays');
  });
});
