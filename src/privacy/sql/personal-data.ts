import { sql, type RawBuilder } from 'kysely';
import type { Db, Tx } from '../../store/store.ts';

/**
 * Where a person's data lives: one entry per table that can hold something about an address,
 * with the query that finds it (the subject access export, export.ts) and what erasure does to it
 * (erase.ts). The schema test (personal-data.test.ts) fails when a table gains a column named like
 * an address that is neither listed here nor exempted with a reason in ADDRESS_COLUMNS_ELSEWHERE.
 *
 * Free text (a journal entry's payload, a webhook's body, a quarantined message's bytes) is
 * matched with `mentions`: the address as a whole word, case-insensitively, so ann@x.test is not
 * found inside joann@x.test.
 */
export interface Subject {
  workspaceId: string;
  /** The normalised address (leads/email.ts checkEmail). */
  email: string;
  leadIds: string[];
  enrollmentIds: string[];
}

type Row = Record<string, unknown>;

/** What erasure does to a table's rows about the person. */
export type Erasure =
  /** Deleted by erase.ts with `del`. */
  | 'delete'
  /** Deleted with the lead (foreign keys on delete cascade). */
  | 'cascade'
  /** The suppression row: replaced by the keyed hash (sequence/suppress.ts eraseSuppression). */
  | 'marker'
  /** The address is one of the workspace's own (a member, a mailbox): erasure refuses until it is removed. */
  | 'refuse';

export interface PersonalTable {
  /** The export's section name. */
  section: string;
  table: string;
  /** Columns that hold an address (the schema test's list). */
  addressColumns: readonly string[];
  find(db: Db, s: Subject): Promise<Row[]>;
  erasure: Erasure;
  /** For 'delete': removes the rows `find` finds, returns how many. */
  del?(tx: Tx, s: Subject): Promise<number>;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The address as a whole word in a text expression (PostgreSQL ARE, case-insensitive). */
function mentions(expr: RawBuilder<unknown>, email: string): RawBuilder<boolean> {
  return sql<boolean>`(${expr} ~* ${`(?<![a-z0-9._%+-])${escapeRegex(email)}(?![a-z0-9-]|\\.[a-z0-9])`})`;
}
const rows = async (q: RawBuilder<Row>, db: Db) => (await q.execute(db)).rows;
const count = async (q: RawBuilder<unknown>, tx: Tx) => (await q.execute(tx)).rows.length;

// Text columns of a message that can name or quote the person.
const messageText = sql`coalesce(from_addr, '') || ' ' || array_to_string(to_addrs || cc_addrs || reply_to, ' ') || ' ' || coalesce(subject, '') || ' ' || coalesce(new_text, '') || ' ' || coalesce(excerpt, '') || ' ' || coalesce(body_html, '')`;
const messageWhere = (s: Subject) => sql`workspace_id = ${s.workspaceId}::uuid and (enrollment_id = any(${s.enrollmentIds}::uuid[]) or ${mentions(messageText, s.email)})`;

const noteWhere = (s: Subject) =>
  sql`workspace_id = ${s.workspaceId}::uuid and (message_id in (select id from message where ${messageWhere(s)}) or ${mentions(sql`body`, s.email)})`;

const ofEnrollments = (table: 'enrollment' | 'send_request' | 'task', s: Subject) =>
  table === 'enrollment'
    ? sql<Row>`select * from enrollment where lead_id = any(${s.leadIds}::uuid[]) order by created_at, id`
    : sql<Row>`select * from ${sql.table(table)} where enrollment_id = any(${s.enrollmentIds}::uuid[]) order by created_at, id`;

export const PERSONAL_TABLES: readonly PersonalTable[] = [
  {
    section: 'leads',
    table: 'lead',
    addressColumns: ['email', 'email_norm', 'search_text'],
    // search_text is the other columns again, lower-cased for search.
    find: (db, s) =>
      rows(
        sql`select id, email, email_norm, first_name, last_name, company, title, phone, phone_e164, phone_status, phone_reason, country, region, time_zone, custom,
                   hygiene_verdict, hygiene_reasons, hygiene_checked_at, hygiene_review, hygiene_reviewed_at, created_at, updated_at
              from lead where id = any(${s.leadIds}::uuid[]) order by created_at, id`,
        db,
      ),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from lead where id = any(${s.leadIds}::uuid[]) returning 1`, tx),
  },
  // Lists they are in and their tags (0090): gone with the lead, so erasure removes them from every list.
  {
    section: 'lead_lists',
    table: 'lead_list_member',
    addressColumns: [],
    find: (db, s) =>
      rows(sql`select m.lead_id, l.name as list, m.added_at from lead_list_member m join lead_list l on l.id = m.list_id where m.lead_id = any(${s.leadIds}::uuid[]) order by m.added_at, l.name`, db),
    erasure: 'cascade',
  },
  { section: 'lead_tags', table: 'lead_tag', addressColumns: [], find: (db, s) => rows(sql`select lead_id, tag, created_at from lead_tag where lead_id = any(${s.leadIds}::uuid[]) order by tag`, db), erasure: 'cascade' },
  { section: 'enrollments', table: 'enrollment', addressColumns: [], find: (db, s) => rows(ofEnrollments('enrollment', s), db), erasure: 'cascade' },
  { section: 'sends', table: 'send_request', addressColumns: [], find: (db, s) => rows(ofEnrollments('send_request', s), db), erasure: 'cascade' },
  { section: 'tasks', table: 'task', addressColumns: [], find: (db, s) => rows(ofEnrollments('task', s), db), erasure: 'cascade' },
  // Notifications that name the lead (a reply, a task: titles carry the name or address); they go with the lead (0099).
  {
    section: 'notifications',
    table: 'notification_event',
    addressColumns: [],
    find: (db, s) => rows(sql`select id, kind, title, body, link, occurred_at from notification_event where lead_id = any(${s.leadIds}::uuid[]) order by id`, db),
    erasure: 'cascade',
  },
  // The lead's calls (number, notes, outcome), placed from a task or not; they go with the lead.
  { section: 'calls', table: 'phone_call', addressColumns: [], find: (db, s) => rows(sql`select * from phone_call where lead_id = any(${s.leadIds}::uuid[]) order by created_at, id`, db), erasure: 'cascade' },
  // Their recordings, listed without the sealed audio (a call can last an hour): `audio` is where an
  // admin downloads each one as a WAV file, opened from its sealed copy. They go with their call.
  {
    section: 'call_recordings',
    table: 'phone_call_recording',
    addressColumns: [],
    find: (db, s) =>
      rows(
        sql`select r.call_id, r.duration_ms, r.bytes, r.announced, r.created_at,
                   '/api/workspaces/' || r.workspace_id || '/calls/' || r.call_id || '/recording' as audio
              from phone_call_recording r join phone_call c on c.id = r.call_id
             where c.lead_id = any(${s.leadIds}::uuid[]) order by r.created_at, r.call_id`,
        db,
      ),
    erasure: 'cascade',
  },
  {
    // Notes on the person's conversations, and notes elsewhere that name them (src/inbox/): found
    // like the messages, and run before the messages go (their cascade would take the first kind).
    section: 'inbox_notes',
    table: 'inbox_note',
    addressColumns: [],
    find: (db, s) => rows(sql`select * from inbox_note where ${noteWhere(s)} order by created_at, id`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from inbox_note where ${noteWhere(s)} returning 1`, tx),
  },
  {
    // A saved view whose filters name the person (a search for their address).
    section: 'inbox_views',
    table: 'inbox_view',
    addressColumns: [],
    find: (db, s) => rows(sql`select * from inbox_view where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`filters::text`, s.email)} order by created_at, id`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from inbox_view where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`filters::text`, s.email)} returning 1`, tx),
  },
  {
    section: 'messages',
    table: 'message',
    addressColumns: ['from_addr', 'to_addrs', 'cc_addrs', 'reply_to'],
    find: (db, s) => rows(sql`select * from message where ${messageWhere(s)} order by at, id`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from message where ${messageWhere(s)} returning 1`, tx),
  },
  {
    section: 'replies_sent_from_inbox',
    table: 'reply_request',
    addressColumns: [],
    // Found by what they hold (the reply's addresses are in `result`); run before messages are deleted.
    find: (db, s) => rows(sql`select * from reply_request where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`coalesce(result::text, '') || ' ' || coalesce(last_error, '')`, s.email)} order by created_at`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from reply_request where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`coalesce(result::text, '') || ' ' || coalesce(last_error, '')`, s.email)} returning 1`, tx),
  },
  {
    section: 'events',
    table: 'event',
    addressColumns: [],
    find: (db, s) => rows(sql`select * from event where workspace_id = ${s.workspaceId}::uuid and (enrollment_id = any(${s.enrollmentIds}::uuid[]) or ${mentions(sql`payload::text`, s.email)}) order by at, id`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from event where workspace_id = ${s.workspaceId}::uuid and (enrollment_id = any(${s.enrollmentIds}::uuid[]) or ${mentions(sql`payload::text`, s.email)}) returning 1`, tx),
  },
  {
    section: 'opens_clicks_unsubscribes',
    table: 'tracking_event',
    addressColumns: [],
    find: (db, s) => rows(sql`select id, send_request_id, enrollment_id, kind, url, link_index, method, user_agent, host(ip) as ip, delay_ms, verdict, confidence, reason, at from tracking_event where enrollment_id = any(${s.enrollmentIds}::uuid[]) order by at, id`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from tracking_event where enrollment_id = any(${s.enrollmentIds}::uuid[]) returning 1`, tx),
  },
  {
    section: 'suppressions',
    table: 'suppression',
    addressColumns: ['email_norm'],
    find: (db, s) => rows(sql`select email_norm, reason, source, created_at from suppression where workspace_id = ${s.workspaceId}::uuid and email_norm = ${s.email}`, db),
    erasure: 'marker',
  },
  // Facts queued for the workspace's CRMs (0054_crm.sql): the address, the activity and whether it
  // was written (the CRM keeps its own copy: erasure there is the CRM's). They go with the lead.
  {
    section: 'crm_activities',
    table: 'crm_activity',
    addressColumns: ['email'],
    find: (db, s) => rows(sql`select id, connection_id, external_id, kind, email, payload, occurred_at, state, crm_id, written_at from crm_activity where workspace_id = ${s.workspaceId}::uuid and (lead_id = any(${s.leadIds}::uuid[]) or lower(email) = ${s.email}) order by id`, db),
    erasure: 'cascade',
  },
  // Changes in (0055_crm_changes.sql): the CRM's copy of the person as Cadenza last read it, the
  // deals naming their address, the conflicts logged on their record and the lists that enrolled
  // them. The CRM keeps its own records (erasure there is the CRM's): a later change of the
  // record in the CRM is read again, and the suppression marker keeps the person from sequences.
  {
    section: 'crm_contacts',
    table: 'crm_contact',
    addressColumns: ['email'],
    find: (db, s) => rows(sql`select connection_id, crm_id, email, fields, updated_at, updated_by, cadenza_written, read_at from crm_contact where workspace_id = ${s.workspaceId}::uuid and (lead_id = any(${s.leadIds}::uuid[]) or email = ${s.email}) order by connection_id, crm_id`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from crm_contact where workspace_id = ${s.workspaceId}::uuid and (lead_id = any(${s.leadIds}::uuid[]) or email = ${s.email}) returning 1`, tx),
  },
  {
    section: 'crm_deals',
    table: 'crm_deal',
    addressColumns: ['contact_emails', 'owner_email'],
    // Their own address only: the deal's other contacts are other people.
    find: (db, s) => rows(sql`select connection_id, crm_id, name, stage, ${s.email}::text as contact_email, created_at, updated_at from crm_deal where workspace_id = ${s.workspaceId}::uuid and ${s.email} = any(contact_emails) order by connection_id, crm_id`, db),
    erasure: 'delete',
    // The deal is the company's; only the person's address leaves it.
    del: (tx, s) => count(sql`update crm_deal set contact_emails = array_remove(contact_emails, ${s.email}) where workspace_id = ${s.workspaceId}::uuid and ${s.email} = any(contact_emails) returning 1`, tx),
  },
  {
    section: 'crm_conflicts',
    table: 'crm_conflict',
    addressColumns: ['email'],
    find: (db, s) => rows(sql`select id, connection_id, crm_id, email, field, crm_value, cadenza_value, crm_updated_at, crm_updated_by, at from crm_conflict where workspace_id = ${s.workspaceId}::uuid and email = ${s.email} order by id`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from crm_conflict where workspace_id = ${s.workspaceId}::uuid and email = ${s.email} returning 1`, tx),
  },
  {
    section: 'crm_list_members',
    table: 'crm_list_member',
    addressColumns: [],
    find: (db, s) => rows(sql`select m.list_enrollment_id, e.list_name, m.crm_id, m.outcome, m.at from crm_list_member m join crm_list_enrollment e on e.id = m.list_enrollment_id where e.workspace_id = ${s.workspaceId}::uuid and m.lead_id = any(${s.leadIds}::uuid[]) order by m.at`, db),
    erasure: 'cascade',
  },
  {
    section: 'webhook_deliveries',
    table: 'webhook_delivery',
    addressColumns: [],
    find: (db, s) => rows(sql`select id, endpoint_id, event_id, event_type, payload, state, attempts, response_code, delivered_at, created_at from webhook_delivery where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`payload::text`, s.email)} order by id`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from webhook_delivery where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`payload::text`, s.email)} returning 1`, tx),
  },
  {
    section: 'import_rejects',
    table: 'lead_import_reject',
    addressColumns: [],
    find: (db, s) => rows(sql`select import_id, line, reason, message, fields, raw from lead_import_reject where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`coalesce(fields::text, '') || ' ' || coalesce(raw, '') || ' ' || message`, s.email)} order by import_id, line`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from lead_import_reject where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`coalesce(fields::text, '') || ' ' || coalesce(raw, '') || ' ' || message`, s.email)} returning 1`, tx),
  },
  {
    section: 'quarantined_messages',
    table: 'quarantine',
    addressColumns: [],
    // The raw bytes as text (escape encoding keeps ASCII, where an address is, as it is).
    find: (db, s) => rows(sql`select id, mailbox_id, provider_key, folder, reason, raw_size, at, resolved_at, encode(raw, 'escape') as raw from quarantine where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`coalesce(encode(raw, 'escape'), '')`, s.email)} order by at`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from quarantine where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`coalesce(encode(raw, 'escape'), '')`, s.email)} returning 1`, tx),
  },
  {
    section: 'audit_log',
    table: 'audit_event',
    addressColumns: [],
    find: (db, s) => rows(sql`select id, at, action, actor_kind, actor_label, target, ip, detail from audit_event where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`actor_label || ' ' || coalesce(target, '') || ' ' || detail::text`, s.email)} order by at, id`, db),
    erasure: 'delete',
    // The log is append-only: only a transaction that sets cadenza.audit_purge may delete (0024).
    del: async (tx, s) => {
      await sql`set local cadenza.audit_purge = 'on'`.execute(tx);
      return count(sql`delete from audit_event where workspace_id = ${s.workspaceId}::uuid and ${mentions(sql`actor_label || ' ' || coalesce(target, '') || ' ' || detail::text`, s.email)} returning 1`, tx);
    },
  },
  {
    section: 'invitations',
    table: 'invitation',
    addressColumns: ['email'],
    find: (db, s) => rows(sql`select id, email, role, created_at, expires_at, accepted_at, revoked_at from invitation where workspace_id = ${s.workspaceId}::uuid and lower(email) = ${s.email} order by created_at`, db),
    erasure: 'delete',
    del: (tx, s) => count(sql`delete from invitation where workspace_id = ${s.workspaceId}::uuid and lower(email) = ${s.email} returning 1`, tx),
  },
  {
    section: 'members',
    table: 'app_user',
    addressColumns: ['email'],
    find: (db, s) => rows(sql`select id, email, name, role, inbox_scope, created_at from app_user where workspace_id = ${s.workspaceId}::uuid and lower(email) = ${s.email}`, db),
    erasure: 'refuse',
  },
  {
    section: 'mailboxes',
    table: 'mailbox',
    addressColumns: ['email'],
    // Never the credential (mailbox_credential) nor the settings: what the mailbox is, not how to open it.
    find: (db, s) => rows(sql`select id, email, display_name, provider, created_at, removed_at from mailbox where workspace_id = ${s.workspaceId}::uuid and lower(email) = ${s.email}`, db),
    erasure: 'refuse',
  },
  {
    section: 'warmup_mail',
    table: 'warmup_mail',
    addressColumns: ['sender_address', 'receiver_address'],
    // Only between the workspace's own mailboxes and the pool's: an address here is a mailbox's.
    find: (db, s) =>
      rows(
        sql`select id, pool, kind, message_id, sender_address, receiver_address, planned_at, sent_at, received_at, received_folder
              from warmup_mail w
             where (lower(sender_address) = ${s.email} or lower(receiver_address) = ${s.email})
               and exists (select 1 from mailbox m where m.workspace_id = ${s.workspaceId}::uuid and m.id in (w.sender_mailbox_id, w.receiver_mailbox_id))
             order by planned_at`,
        db,
      ),
    erasure: 'refuse',
  },
];

/**
 * Columns named like an address that hold no workspace's prospect data, each with why: the schema
 * test accepts them without an entry above.
 */
export const ADDRESS_COLUMNS_ELSEWHERE: Record<string, string> = {
  'account.email': "A person who signs in: the installation's account, not a workspace's data; removing the member and the account deletes it",
  'login_failure.email_norm': 'The sign-in limiter counts failed attempts per address within its window (api/auth/login-limiter.ts); not a workspace\'s data',
  'oauth_flow.login_hint': 'The mailbox being connected during an OAuth flow, which expires in minutes',
  'api_key.created_by_label': "The member who created the key (their address or name), shown beside the key",
  'warmup_remote_member.address': "A warmup mailbox of a peer installation (federation): that installation's own sender, never a prospect; replaced at each exchange and deleted when the peering ends",
  'weekly_report_run.recipients': 'How many members a week\'s report went to (a count, no address)',
  'notification.email_state': 'Whether a notification waits for the email digest (a state, no address); the notification goes with its event, and the event with its lead',
  'notification_preference.email': 'Whether a member wants a kind of notification by email (a yes or no, no address)',
};
