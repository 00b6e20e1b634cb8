import { describe, expect, it } from 'vitest';
import { anyDatabaseUrl, roleDatabaseUrl, roleUrlEnv } from './role-database-url.ts';

const shared = 'postgres://cadenza@db/cadenza';
const sender = 'postgres://cadenza_sender@db/cadenza?sslmode=verify-full&sslcert=s.crt&sslkey=s.key&sslrootcert=trust.pem';
const api = 'postgres://cadenza_api@db/cadenza?sslmode=verify-full&sslcert=a.crt&sslkey=a.key&sslrootcert=trust.pem';

describe("a role process's database URL", () => {
  it("is the role's own when set, else DATABASE_URL; --database-url wins over both", () => {
    const cfg = { DATABASE_URL: shared, CADENZA_DATABASE_URL_SENDER: sender };
    expect(roleDatabaseUrl(['sender'], cfg)).toBe(sender);
    expect(roleDatabaseUrl(['scheduler'], cfg)).toBe(shared);
    expect(roleDatabaseUrl(['sender'], cfg, 'postgres://x@y/z')).toBe('postgres://x@y/z');
    expect(roleDatabaseUrl(['api'], {})).toBeUndefined();
    // Not the embedded store for one role while the others are on PostgreSQL.
    expect(() => roleDatabaseUrl(['scheduler'], { CADENZA_DATABASE_URL_SENDER: sender })).toThrow(/role scheduler has no database URL while others have one: set CADENZA_DATABASE_URL_SCHEDULER or DATABASE_URL/);
  });

  it('refuses roles with different URLs in one process, saying how to run them', () => {
    expect(() => roleDatabaseUrl(['api', 'sender'], { CADENZA_DATABASE_URL_API: api, CADENZA_DATABASE_URL_SENDER: sender })).toThrow(/cannot run in one process: run them with --supervise/);
    expect(roleDatabaseUrl(['api', 'scheduler'], { DATABASE_URL: shared })).toBe(shared);
  });

  it("the supervisor's child gets its URL whatever the environment it inherits holds", () => {
    const env = { CADENZA_DATABASE_URL_SENDER: sender, ...roleUrlEnv(['sender'], 'postgres://given@db/c') };
    expect(roleDatabaseUrl(['sender'], env)).toBe('postgres://given@db/c');
    expect(anyDatabaseUrl({ CADENZA_DATABASE_URL_SYNC: sender })).toBe(true);
    expect(anyDatabaseUrl({})).toBe(false);
  });
});
