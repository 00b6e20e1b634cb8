import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import { normalizeEmail } from '../leads/email.ts';
import { leadColumns } from '../leads/lead-fields.ts';
import { insertLead } from '../leads/sql/leads.ts';
import { enrollInTx } from '../sequence/bulk-enroll.ts';
import type { Db, Tx } from '../store/store.ts';
import type { CrmChangeReader, CrmContact } from './connector.ts';
import { leadsByAddress } from './sql/changes.ts';

/**
 * Enrolling a CRM list in a sequence (docs/crm.md "Enroll from a list"): an admin picks a list of
 * a connection and a sequence, once or continuously. Each sync round reads the list page by page
 * (crm_list_enrollment.next_page: a read interrupted resumes where it stood); each member not
 * handled before for this list enrollment (crm_list_member) is matched to the lead of its address,
 * or made a lead from the CRM's fields, and enrolled by the same code as any enrollment
 * (bulk-enroll.ts enrollInTx: suppression, hygiene, already-enrolled and the unique index all
 * apply). A member is handled once, whatever it came to: nobody is enrolled twice by a list, and
 * someone who left and rejoined the list is not enrolled again. `once` is done after its last
 * page; `continuous` starts over every `everyMs`, so new members are enrolled as they appear.
 */

export interface ListEnrollmentView {
  id: string;
  listId: string;
  listName: string;
  sequenceId: string;
  mode: 'once' | 'continuous';
  state: 'active' | 'done' | 'stopped';
  enrolled: number;
  refused: number;
  lastRunAt: string | null;
  lastError: string | null;
}

export async function createListEnrollment(
  d: { db: Db; random: Random; now: number },
  o: { workspaceId: string; connectionId: string; listId: string; listName: string; sequenceId: string; mode: 'once' | 'continuous'; createdBy: string | null },
): Promise<string> {
  const seq = await d.db.selectFrom('sequence').select(['status']).where('id', '=', o.sequenceId).where('workspace_id', '=', o.workspaceId).executeTakeFirst();
  if (!seq) throw cadenzaError('NOT_FOUND', 'no such sequence in this workspace', { field: 'sequenceId' });
  if (seq.status !== 'active') throw cadenzaError('INVALID_INPUT', `the sequence is ${seq.status}: only an active sequence takes enrollments`, { field: 'sequenceId' });
  const id = newId(d.now, d.random);
  try {
    await d.db
      .insertInto('crm_list_enrollment')
      .values({ id, connection_id: o.connectionId, workspace_id: o.workspaceId, list_id: o.listId, list_name: o.listName, sequence_id: o.sequenceId, mode: o.mode, created_by: o.createdBy })
      .execute();
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw cadenzaError('CONFLICT', 'this list is already being enrolled in this sequence');
    throw e;
  }
  return id;
}

export async function listEnrollments(db: Db, connectionId: string, id?: string): Promise<ListEnrollmentView[]> {
  let q = db.selectFrom('crm_list_enrollment').selectAll().where('connection_id', '=', connectionId);
  if (id) q = q.where('id', '=', id);
  const rows = await q.orderBy('created_at').execute();
  return rows.map((r) => ({
    id: r.id,
    listId: r.list_id,
    listName: r.list_name,
    sequenceId: r.sequence_id,
    mode: r.mode,
    state: r.state,
    enrolled: r.enrolled,
    refused: r.refused,
    lastRunAt: r.last_run_at ? new Date(r.last_run_at).toISOString() : null,
    lastError: r.last_error,
  }));
}

export interface ListRunDeps {
  db: Db;
  clock: Clock;
  random: Random;
  /** How often a continuous list is read again from its start (default 15 min). */
  everyMs?: number;
  /** Pages per list enrollment per round (default 20), so one huge list does not hold the round. */
  maxPages?: number;
}

/** Runs the connection's active list enrollments that are due; returns how many enrollments were made. */
export async function runListEnrollments(d: ListRunDeps, connectionId: string, reader: CrmChangeReader): Promise<number> {
  const now = d.clock.now();
  const everyMs = d.everyMs ?? 15 * 60_000;
  const due = await d.db.selectFrom('crm_list_enrollment').selectAll().where('connection_id', '=', connectionId).where('state', '=', 'active').orderBy('created_at').execute();
  let made = 0;
  for (const le of due) {
    const resuming = le.next_page !== null;
    if (!resuming && le.mode === 'continuous' && le.last_run_at && new Date(le.last_run_at).getTime() + everyMs > now) continue;
    // A paused or archived sequence: its members wait (a refusal now would be final for them).
    const seq = await d.db.selectFrom('sequence').select('status').where('id', '=', le.sequence_id).executeTakeFirst();
    if (seq?.status !== 'active') {
      await d.db.updateTable('crm_list_enrollment').set({ last_error: `the sequence is ${seq?.status ?? 'deleted'}: members wait until it is active` }).where('id', '=', le.id).execute();
      continue;
    }
    let page: string | null = le.next_page;
    for (let n = 0; n < (d.maxPages ?? 20); n++) {
      const members = await reader.listMembers(le.list_id, page);
      made += await d.db.transaction().execute((tx) => enrollPage(tx, d, le, members.contacts, members.next));
      page = members.next;
      if (page === null) break;
    }
  }
  return made;
}

async function enrollPage(
  tx: Tx,
  d: ListRunDeps,
  le: { id: string; workspace_id: string; sequence_id: string; connection_id: string; mode: 'once' | 'continuous' },
  contacts: readonly CrmContact[],
  next: string | null,
): Promise<number> {
  const now = d.clock.now();
  const handled = contacts.length
    ? new Set((await tx.selectFrom('crm_list_member').select('crm_id').where('list_enrollment_id', '=', le.id).where('crm_id', 'in', contacts.map((c) => c.crmId)).execute()).map((r) => r.crm_id))
    : new Set<string>();
  const fresh = contacts.filter((c) => !handled.has(c.crmId));
  const outcomes = new Map<string, { leadId: string | null; outcome: string }>();
  const address = (c: CrmContact) => (c.email ? normalizeEmail(c.email) : null);
  const leads = await leadsByAddress(tx, le.workspace_id, fresh.flatMap((c) => (address(c) ? [address(c)!] : [])));
  const leadOf = new Map<string, string>();
  for (const c of fresh) {
    const a = address(c);
    if (!a) {
      outcomes.set(c.crmId, { leadId: null, outcome: 'no_address' });
      continue;
    }
    let leadId = leads.get(a)?.id ?? leadOf.get(a);
    if (!leadId) {
      // A member without a lead becomes one, from the CRM's fields, by the same checks as any new lead.
      let cols;
      try {
        cols = leadColumns({ email: c.email!, firstName: c.firstName, lastName: c.lastName, company: c.company, title: c.title, phone: c.phone });
      } catch {
        outcomes.set(c.crmId, { leadId: null, outcome: 'invalid_address' });
        continue;
      }
      leadId = newId(now, d.random);
      await insertLead(tx, { id: leadId, workspaceId: le.workspace_id, cols: { ...cols, email: cols.email!, email_norm: cols.email_norm! }, custom: undefined });
      await tx.updateTable('crm_contact').set({ lead_id: leadId }).where('connection_id', '=', le.connection_id).where('crm_id', '=', c.crmId).execute();
    }
    leadOf.set(a, leadId);
    outcomes.set(c.crmId, { leadId, outcome: 'pending' });
  }
  const leadIds = [...new Set([...outcomes.values()].flatMap((o) => (o.leadId ? [o.leadId] : [])))];
  const r = leadIds.length ? await enrollInTx(tx, { clock: d.clock, random: d.random }, { workspaceId: le.workspace_id, sequenceId: le.sequence_id, leadIds }) : null;
  const enrolled = new Set(r?.created.map((e) => e.leadId) ?? []);
  const refused = new Map((r?.refused ?? []).map((x) => [x.leadId, x.reason]));
  for (const o of outcomes.values()) if (o.leadId) o.outcome = enrolled.has(o.leadId) ? 'enrolled' : (refused.get(o.leadId) ?? 'already_enrolled');
  if (outcomes.size) {
    await tx
      .insertInto('crm_list_member')
      .values([...outcomes].map(([crmId, o]) => ({ list_enrollment_id: le.id, crm_id: crmId, lead_id: o.leadId, outcome: o.outcome, at: new Date(now) })))
      .onConflict((oc) => oc.columns(['list_enrollment_id', 'crm_id']).doNothing())
      .execute();
  }
  const refusedCount = [...outcomes.values()].filter((o) => o.outcome !== 'enrolled').length;
  await tx
    .updateTable('crm_list_enrollment')
    .set((eb) => ({
      next_page: next,
      enrolled: eb('enrolled', '+', enrolled.size),
      refused: eb('refused', '+', refusedCount),
      last_run_at: new Date(now),
      last_error: null,
      ...(next === null && le.mode === 'once' ? { state: 'done' as const } : {}),
    }))
    .where('id', '=', le.id)
    .execute();
  return enrolled.size;
}
