import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMigrations } from '../../store/migrate.ts';
import { DB_ROLES, grantStatements, RESTRICTED } from './db-grants.ts';

describe('least-privilege grants', () => {
  // The migrations, and migrate.ts, which creates schema_migration itself.
  const all = [...loadMigrations().map((m) => m.sql), readFileSync(join(import.meta.dirname, '..', '..', 'store', 'migrate.ts'), 'utf8')].join('\n');

  it('every table and column the rules restrict exists in the migrations (a rename must update the rules)', () => {
    for (const [table, rule] of Object.entries(RESTRICTED)) {
      expect(all, table).toMatch(new RegExp(`create table (if not exists )?${table} \\(`));
      for (const cols of Object.values(rule.columns ?? {})) for (const c of Object.values(cols).flat()) expect(all, `${table}.${c}`).toMatch(new RegExp(`\\b${c}\\b`));
    }
  });

  it('only the scheduler inserts send requests; the API reads no ciphertext; every other table is read-write for every role', () => {
    const sql = grantStatements({ database: 'cadenza', schema: 'public', tables: ['send_request', 'mailbox_credential', 'enrollment'], owner: 'owner' });
    const inserts = sql.filter((s) => /^grant [^;]*insert[^;]* on "public"."send_request"/.test(s));
    expect(inserts).toEqual([`grant select, insert, update, delete on "public"."send_request" to "${DB_ROLES.scheduler}"`]);
    const apiCredential = sql.filter((s) => s.includes('"mailbox_credential"') && s.endsWith(`"${DB_ROLES.api}"`));
    expect(apiCredential.join('\n')).not.toMatch(/select[^(]*on|select \([^)]*ciphertext/);
    expect(sql).toContain(`grant select, insert, update, delete on "public"."enrollment" to ${Object.values(DB_ROLES).map((r) => `"${r}"`).join(', ')}`);
    // From nothing on every run: what the rules no longer grant is taken away.
    expect(sql.findIndex((s) => s.startsWith('revoke all on all tables'))).toBeLessThan(sql.findIndex((s) => s.includes('"enrollment"')));
  });

  it('definitions are written by the API alone; webhook secrets and revoked tokens stay out of the other roles’ reach', () => {
    const tables = ['lead', 'sequence', 'step', 'variant', 'sequence_mailbox', 'webhook_endpoint', 'webhook_delivery', 'credential_task', 'phone_call'];
    const sql = grantStatements({ database: 'cadenza', schema: 'public', tables, owner: 'owner' });
    const to = (role: keyof typeof DB_ROLES, table: string) => sql.filter((s) => s.includes(`on "public"."${table}" to "${DB_ROLES[role]}"`));
    for (const t of ['lead', 'sequence', 'step', 'variant', 'sequence_mailbox']) {
      expect(to('api', t)).toEqual([`grant select, insert, update, delete on "public"."${t}" to "${DB_ROLES.api}"`]);
      for (const r of ['scheduler', 'sender', 'sync'] as const) expect(to(r, t)).toEqual([`grant select on "public"."${t}" to "${DB_ROLES[r]}"`]);
    }
    // What the webhook triggers read of an endpoint, never its URL nor its sealed secrets.
    for (const r of ['scheduler', 'sender', 'sync'] as const) {
      expect(to(r, 'webhook_endpoint')).toEqual([`grant select ("id", "workspace_id", "events", "disabled_at") on "public"."webhook_endpoint" to "${DB_ROLES[r]}"`]);
    }
    expect(to('sync', 'webhook_delivery')).toEqual([`grant insert on "public"."webhook_delivery" to "${DB_ROLES.sync}"`]);
    // Credential tasks: the API asks and reads answers, never `sealed`; only the sender carries them out.
    expect(to('api', 'credential_task').join('\n')).not.toMatch(/sealed/);
    expect(to('scheduler', 'credential_task')).toEqual([]);
    // Calls (a lead's number, notes, history): the API's alone.
    expect(to('api', 'phone_call')).toEqual([`grant select, insert, update, delete on "public"."phone_call" to "${DB_ROLES.api}"`]);
    for (const r of ['sender', 'sync'] as const) expect(to(r, 'phone_call')).toEqual([]);
    // The scheduler's purge deletes ended calls no lead owns: it reads only the columns that choose them.
    expect(to('scheduler', 'phone_call')).toEqual([`grant delete on "public"."phone_call" to "${DB_ROLES.scheduler}"`, `grant select ("id", "workspace_id", "created_at", "lead_id", "state") on "public"."phone_call" to "${DB_ROLES.scheduler}"`]);
    expect(to('sync', 'credential_task')).toEqual([]);
    expect(to('sender', 'credential_task')).toEqual([`grant select, insert, update, delete on "public"."credential_task" to "${DB_ROLES.sender}"`]);
  });
});
