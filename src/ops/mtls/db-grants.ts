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
 *   schema_migration      read only: migrations are the owner's.
 *   account, account_device, api_key, app_user, auth_session, invitation, login_failure,
 *   setup_token           the API's alone (API_ONLY below).
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
const API_ONLY = ['account', 'account_device', 'api_key', 'app_user', 'auth_session', 'invitation', 'login_failure', 'setup_token'];

export const RESTRICTED: Record<string, TableRule> = {
  ...Object.fromEntries(API_ONLY.map((t) => [t, { table: { api: ['select', 'insert', 'update', 'delete'] } }])),
  // Migrations are the owner's (`cadenza migrate`): a role reads which are applied, at start.
  schema_migration: { table: { api: ['select'], scheduler: ['select'], sender: ['select'], sync: ['select'] } },
  send_request: {
    table: { api: ['select', 'update', 'delete'], scheduler: RW, sender: ['select', 'update', 'delete'], sync: ['select', 'update', 'delete'] },
  },
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
