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
    const sql = grantStatements({ database: 'cadenza', schema: 'public', tables: ['send_request', 'mailbox_credential', 'lead'], owner: 'owner' });
    const inserts = sql.filter((s) => /^grant [^;]*insert[^;]* on "public"."send_request"/.test(s));
    expect(inserts).toEqual([`grant select, insert, update, delete on "public"."send_request" to "${DB_ROLES.scheduler}"`]);
    const apiCredential = sql.filter((s) => s.includes('"mailbox_credential"') && s.endsWith(`"${DB_ROLES.api}"`));
    expect(apiCredential.join('\n')).not.toMatch(/select[^(]*on|select \([^)]*ciphertext/);
    expect(sql).toContain(`grant select, insert, update, delete on "public"."lead" to ${Object.values(DB_ROLES).map((r) => `"${r}"`).join(', ')}`);
    // From nothing on every run: what the rules no longer grant is taken away.
    expect(sql.findIndex((s) => s.startsWith('revoke all on all tables'))).toBeLessThan(sql.findIndex((s) => s.includes('"lead"')));
  });
});
