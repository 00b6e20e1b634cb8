import pg from 'pg';
import type { Role } from '../../common/config.ts';

/**
 * What each role process may do in PostgreSQL, as the statements `cadenza db grants` runs as the
 * superuser (pure: the tables in, SQL out; re-running it gives the same privileges).
 *
 * Every role reads and writes the schema's tables, with these exceptions, each found by reading the
 * code paths that write (docs/security.md "What each role may do"):
 *
 *   send_request          INSERT: the scheduler only. Send requests are created by one effect,
 *                         create_send_request, which only a step falling due produces (sequence/
 *                         transition.ts runStep), and steps fall due only in the scheduler's
 *                         EnrollmentService.fireDue. The other roles update requests (the sender
 *                         claims and records them, the sync role and the API cancel or pause them,
 *                         the API resends by hand), so UPDATE stays theirs; but marking one 'sent'
 *                         (or 'possibly_sent') is the sender's alone, enforced by the trigger of migration 0040 (a column
 *                         grant cannot restrict a value).
 *   mailbox_credential    the sealed credential (ciphertext) is read by the processes that open
 *                         mailboxes: sender and sync. The API stores credentials (connect, OAuth
 *                         callback) and deletes them (mailbox removal) but may not read one back;
 *                         the scheduler neither reads nor writes them.
 *   credential_task       mailbox tests, inbox replies and grant revocations the API asks for and
 *                         the sender carries out (sending/credential-tasks/): the API writes a task
 *                         (and a credential's deletion writes a revocation, by trigger, with the
 *                         API's rights), reads its state and answer, and withdraws it; it never
 *                         reads `sealed` (a revoked grant's token). The sender reads and writes
 *                         them all; the scheduler and the sync role have no business there.
 *   sequence, step, variant, sequence_mailbox, lead, experiment_winner, sequence_experiment_winner
 *                         definitions (and an experiment's declared winner, which the API role's
 *                         auto-winner writes with a bump of its sequence's version), written only where people define them: apply-definition.ts,
 *                         the lead routes and imports, a mailbox's removal, privacy erasure, all in
 *                         the API. The scheduler, the sender and the sync role read them (a step's
 *                         template, a lead's zone and address, a sequence's pool), never write.
 *   webhook_endpoint      the API's (routes, the dispatcher, sealing legacy secrets: app.ts runs it
 *                         in the API role). The other roles write journal entries, tasks, messages
 *                         and domain alerts, whose triggers (0009, 0031, 0081) read an endpoint's id, workspace,
 *                         events and disabled_at with the writer's rights: those columns only, never
 *                         the URL or the sealed signing secrets.
 *   webhook_delivery      the dispatcher's (API); those triggers insert into it from every role;
 *                         the scheduler's privacy purge reads and deletes old ones.
 *   phone_call            calls, the API's alone: the call routes write them and the API role's
 *                         sweep closes them (src/dialer/calls.ts); no other role reads a lead's
 *                         number, notes or call history.
 *   weekly_report_setting, weekly_report_recipient, weekly_report_run
 *                         the weekly analytics report (api/weekly-report/): the API's alone, its
 *                         routes and the job that sends it, which runs in the API role because it
 *                         reads the recipients' addresses (app_user).
 *   rep_voicemail         reps' recorded voicemail messages (sealed), the API's alone: only the
 *                         voicemail routes read or write them.
 *   phone_call_recording, call_capture_quarantine, call_transcript
 *                         call recordings (sealed audio), the captures that could not become
 *                         one, and the recordings' transcripts (sealed): the API's alone, like the
 *                         calls (its ingester, transcriber and purge write them, its routes play,
 *                         show and delete them).
 *   crm_connection, crm_activity
 *                         CRM sync: the API's (routes and the writer, which alone opens the sealed
 *                         credentials); the other roles' facts queue activities through triggers,
 *                         which read a connection's id, workspace and activity kinds and insert.
 *   crm_contact, crm_deal, crm_conflict, crm_list_enrollment, crm_list_member
 *                         changes in (0055): the API's (the reader runs in the API role); the
 *                         journal trigger of the other roles' engine writes reads a mirrored
 *                         contact's lead and queues its Cadenza-owned fields (cadenza_pending).
 *   oauth_flow, acme_account, acme_challenge, audit_event, figure_bucket, figure_fold, reply_time
 *                         the API's alone: OAuth consent flows (mailbox and CRM routes), the
 *                         tracking hosts' ACME account and challenges (CustomHosts), the audit log
 *                         (written by routes, purged by the API's retention timer) and the
 *                         analytics rollup (the API's minute fold and its reads). One exception:
 *                         the scheduler appends to the audit log (insert only: it reads, changes
 *                         and deletes nothing there) when its daily re-check takes an SSO
 *                         domain's proof away (0130, src/api/auth/sso/proof-recheck-duty.ts).
 *   lead_import, lead_import_reject
 *                         imports run in the API's requests; the scheduler's nightly purge reads
 *                         an import's age and state and deletes its rejects past retention.
 *   privacy_purge_day     the scheduler's record of each nightly purge; the API reads it.
 *   phone_call, call_capture_quarantine
 *                         besides the API, the scheduler's purge deletes ended calls no lead owns
 *                         and old capture failures, reading only the columns that choose them.
 *   inbox_state, inbox_read, inbox_label, inbox_message_label, inbox_note, inbox_view
 *                         the unified inbox's triage (0086, src/inbox/): the API's alone, only
 *                         the inbox routes read or write them; a message's rows go with it by
 *                         cascade (run with the table owner's rights), whichever role deletes it.
 *   lead_list, lead_list_member, lead_tag
 *                         lead lists, segments and tags (0090): the API's alone, written and read
 *                         by the lead routes; a lead's deletion (API) cascades to them.
 *   notification_event    notifications (0099, src/api/notify/): the facts are recorded by triggers in
 *                         the transaction of the role that owns them (the sync role's reply, the
 *                         scheduler's task, any role's change of a mailbox's health, a domain's
 *                         health change (0120) or a warmup cap reason, a reply's intent changed
 *                         or a meeting journalled (0136)), which insert only; the
 *                         API's fan-out reads them and marks them handed out, its duty purges them.
 *   notification, notification_preference, notification_setting, notification_slack
 *                         the API's alone: members' choices, the bell, the digest (members'
 *                         addresses, app_user) and the Slack posts (sealed URLs).
 *   schema_migration      read only: migrations are the owner's.
 *   account, account_device, api_key, app_user, auth_session, invitation, login_failure,
 *   setup_token, workspace_sso
 *                         the API's alone (API_ONLY below).
 *   cadenza_create_event_partition(timestamptz)
 *                         the one piece of DDL the roles run (store/partitions.ts), through this
 *                         SECURITY DEFINER function of the schema's owner (migration 0040).
 *
 * No role may create, alter or drop anything: migrations are applied by the owner (`cadenza
 * migrate`), and `cadenza db grants` is run again after each, so new tables get their grants.
 */
export const DB_ROLES: Record<Role, string> = {
  api: 'cadenza_api',
  scheduler: 'cadenza_scheduler',
  sender: 'cadenza_sender',
  sync: 'cadenza_sync',
};

const ALL = Object.values(DB_ROLES);

interface TableRule {
  /** Table privileges per role; a role not named gets none on the whole table. */
  table: Partial<Record<Role, string[]>>;
  /** Column privileges on top, per role: privilege → columns. */
  columns?: Partial<Record<Role, Record<string, string[]>>>;
}

const RW = ['select', 'insert', 'update', 'delete'];

/**
 * Sign-in and identity: written and read only by src/api/auth/ (and privacy's export and erasure,
 * which run in the API or as the owner's command). No other role reads them: a sender or sync
 * process taken over cannot mint an API key, a session or an account, nor list them.
 */
const API_ONLY = ['account', 'account_device', 'api_key', 'app_user', 'auth_session', 'invitation', 'login_failure', 'setup_token', 'workspace_sso'];

/** Read and written by the API role's own work only (file comment). */
const API_WORK = ['oauth_flow', 'acme_account', 'acme_challenge', 'figure_bucket', 'figure_fold', 'reply_time'];

/** The unified inbox's triage, notes and views (0086): the inbox routes' alone. */
const INBOX = ['inbox_state', 'inbox_read', 'inbox_label', 'inbox_message_label', 'inbox_note', 'inbox_view'];

/** Notifications (0099, src/api/notify/): members' choices, the bell, the digest and Slack posts. */
const NOTIFY = ['notification', 'notification_preference', 'notification_setting', 'notification_slack'];

/** Written by the API alone (file comment), read by every role. */
const DEFINITIONS = ['lead', 'sequence', 'sequence_mailbox', 'step', 'variant', 'experiment_winner', 'sequence_experiment_winner'];

/** What the webhook triggers (0009_webhooks.sql, 0031_domain_health.sql) read of an endpoint. */
const WEBHOOK_TRIGGER_COLUMNS = ['id', 'workspace_id', 'events', 'disabled_at'];

/** What the CRM triggers (0054_crm.sql) read of a connection: never its credentials. */
const CRM_TRIGGER_COLUMNS = ['id', 'workspace_id', 'activities'];

/** What the journal trigger of 0055 reads and writes of a mirrored contact. */
const CRM_FIELDS_TRIGGER = { select: ['lead_id', 'cadenza_pending'], update: ['cadenza_pending'] };

export const RESTRICTED: Record<string, TableRule> = {
  ...Object.fromEntries(API_ONLY.map((t) => [t, { table: { api: ['select', 'insert', 'update', 'delete'] } }])),
  // Migrations are the owner's (`cadenza migrate`): a role reads which are applied, at start.
  schema_migration: { table: { api: ['select'], scheduler: ['select'], sender: ['select'], sync: ['select'] } },
  send_request: {
    table: { api: ['select', 'update', 'delete'], scheduler: RW, sender: ['select', 'update', 'delete'], sync: ['select', 'update', 'delete'] },
  },
  credential_task: {
    table: { api: ['insert'], sender: RW },
    columns: {
      api: {
        select: ['id', 'workspace_id', 'mailbox_id', 'kind', 'input', 'state', 'result', 'attempts', 'run_after', 'claimed_until', 'created_at', 'updated_at'],
        update: ['state', 'updated_at'],
      },
    },
  },
  ...Object.fromEntries(INBOX.map((t) => [t, { table: { api: RW } }])),
  ...Object.fromEntries(DEFINITIONS.map((t) => [t, { table: { api: RW, scheduler: ['select'], sender: ['select'], sync: ['select'] } }])),
  webhook_endpoint: {
    table: { api: RW },
    columns: { scheduler: { select: WEBHOOK_TRIGGER_COLUMNS }, sender: { select: WEBHOOK_TRIGGER_COLUMNS }, sync: { select: WEBHOOK_TRIGGER_COLUMNS } },
  },
  webhook_delivery: { table: { api: RW, scheduler: ['select', 'insert', 'delete'], sender: ['insert'], sync: ['insert'] } },
  // CRM sync (0054_crm.sql): the API role's (its routes, and the writer that holds the sealed
  // credentials); the other roles' facts queue activities through the triggers, which read which
  // connections want them and insert.
  crm_connection: {
    table: { api: RW },
    columns: { scheduler: { select: CRM_TRIGGER_COLUMNS }, sender: { select: CRM_TRIGGER_COLUMNS }, sync: { select: CRM_TRIGGER_COLUMNS } },
  },
  crm_activity: { table: { api: RW, scheduler: ['insert'], sender: ['insert'], sync: ['insert'] } },
  crm_contact: { table: { api: RW }, columns: { scheduler: CRM_FIELDS_TRIGGER, sender: CRM_FIELDS_TRIGGER, sync: CRM_FIELDS_TRIGGER } },
  crm_deal: { table: { api: RW } },
  crm_conflict: { table: { api: RW } },
  crm_list_enrollment: { table: { api: RW } },
  crm_list_member: { table: { api: RW } },
  // The scheduler's nightly purge deletes ended calls no lead owns, past their retention (privacy/
  // sql/purge.ts): the columns that choose them, never a number, notes or what was said.
  phone_call: { table: { api: RW, scheduler: ['delete'] }, columns: { scheduler: { select: ['id', 'workspace_id', 'created_at', 'lead_id', 'state'] } } },
  // The weekly report (0070): its settings and recipients are the API's routes', and the job that
  // sends it runs in the API role (it reads members' addresses, app_user, which is the API's alone).
  weekly_report_setting: { table: { api: RW } },
  weekly_report_recipient: { table: { api: RW } },
  weekly_report_run: { table: { api: RW } },
  // Notifications (0099): the other roles' facts insert their event by trigger; the rest is the API's.
  notification_event: { table: { api: RW, scheduler: ['insert'], sender: ['insert'], sync: ['insert'] } },
  ...Object.fromEntries(NOTIFY.map((t) => [t, { table: { api: RW } }])),
  lead_list: { table: { api: RW } },
  lead_list_member: { table: { api: RW } },
  lead_tag: { table: { api: RW } },
  rep_voicemail: { table: { api: RW } },
  phone_call_recording: { table: { api: RW } },
  call_capture_quarantine: { table: { api: RW, scheduler: ['delete'] }, columns: { scheduler: { select: ['id', 'workspace_id', 'at'] } } },
  // Sign-in and connection flows in progress (mailbox and CRM OAuth), the tracking hosts' ACME
  // account and challenges, the audit log and the analytics rollup: the API's work alone (its
  // routes, CustomHosts, the audit retention and the minute's fold in app.ts).
  ...Object.fromEntries(API_WORK.map((t) => [t, { table: { api: RW } }])),
  // The scheduler's SSO re-check records a proof it took away, and may do nothing else there.
  audit_event: { table: { api: RW, scheduler: ['insert'] } },
  // Imports run in the API's requests; the scheduler's purge deletes rejects past their retention,
  // chosen by their import's age, and reads nothing of the rows themselves.
  lead_import: { table: { api: RW }, columns: { scheduler: { select: ['id', 'workspace_id', 'created_at', 'status'] } } },
  lead_import_reject: { table: { api: RW, scheduler: ['delete'] }, columns: { scheduler: { select: ['import_id', 'line'] } } },
  // The purge's record of each day: written by the scheduler that ran it, read by the API's settings.
  privacy_purge_day: { table: { api: ['select'], scheduler: RW } },
  call_transcript: { table: { api: RW } },
  mailbox_credential: {
    table: { api: ['insert', 'delete'], sender: RW, sync: RW },
    // vault.put's upsert reads the conflict column and updates the rest; nothing reads ciphertext.
    columns: { api: { select: ['mailbox_id', 'kind', 'updated_at'], update: ['kind', 'ciphertext', 'updated_at'] } },
  },
};

export interface GrantInput {
  database: string;
  schema: string;
  /** The schema's tables (pg_tables), partitions included. */
  tables: string[];
  /** The role that owns the schema's tables (applies migrations): its future tables get the default grants. */
  owner: string;
}

/** A quoted SQL identifier, as libpq quotes one (node-postgres's own escapeIdentifier). */
const id = (s: string) => pg.escapeIdentifier(s);

export function grantStatements(i: GrantInput): string[] {
  const out: string[] = [];
  // Login roles without a password: pg_hba.conf's `hostssl … cert` admits them by client
  // certificate alone (CN = role name), and a password line would not match them.
  for (const r of ALL) {
    out.push(`do $$ begin if not exists (select 1 from pg_roles where rolname = '${r}') then create role ${id(r)} login; end if; end $$`);
    out.push(`alter role ${id(r)} login nosuperuser nocreatedb nocreaterole noreplication nobypassrls`);
  }
  const roles = ALL.map(id).join(', ');
  out.push(`grant connect on database ${id(i.database)} to ${roles}`);
  out.push(`revoke create on schema ${id(i.schema)} from ${roles}`);
  out.push(`grant usage on schema ${id(i.schema)} to ${roles}`);
  // From nothing, every time: a privilege taken out of the rules is taken away on the next run.
  out.push(`revoke all on all tables in schema ${id(i.schema)} from ${roles}`);
  for (const t of [...i.tables].sort()) {
    const rule = RESTRICTED[t];
    const table = `${id(i.schema)}.${id(t)}`;
    if (!rule) {
      out.push(`grant ${RW.join(', ')} on ${table} to ${roles}`);
      continue;
    }
    for (const role of Object.keys(DB_ROLES) as Role[]) {
      const privs = rule.table[role];
      if (privs?.length) out.push(`grant ${privs.join(', ')} on ${table} to ${id(DB_ROLES[role])}`);
      for (const [priv, cols] of Object.entries(rule.columns?.[role] ?? {})) out.push(`grant ${priv} (${cols.map(id).join(', ')}) on ${table} to ${id(DB_ROLES[role])}`);
    }
  }
  out.push(`grant usage, select on all sequences in schema ${id(i.schema)} to ${roles}`);
  out.push(`grant execute on function ${id(i.schema)}.cadenza_create_event_partition(timestamptz) to ${roles}`);
  // Tables a later migration creates (and the event partitions the function adds) are readable and
  // writable by every role until `cadenza db grants` runs again and applies the restrictions.
  out.push(`alter default privileges for role ${id(i.owner)} in schema ${id(i.schema)} grant ${RW.join(', ')} on tables to ${roles}`);
  out.push(`alter default privileges for role ${id(i.owner)} in schema ${id(i.schema)} grant usage, select on sequences to ${roles}`);
  return out;
}
