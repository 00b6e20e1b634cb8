import { cadenzaError } from '../common/errors.ts';
import type { Config, Role } from '../common/config.ts';

/**
 * The PostgreSQL URL a process running `roles` connects with. Under least privilege each role has
 * its own: CADENZA_DATABASE_URL_API, _SCHEDULER, _SENDER, _SYNC, each naming the role's database
 * user and its certificate, libpq style:
 *
 *   postgres://cadenza_sender@db.example.com:5432/cadenza?sslmode=verify-full
 *     &sslrootcert=/etc/cadenza/tls/trust.pem&sslcert=/etc/cadenza/tls/cadenza_sender.crt
 *     &sslkey=/etc/cadenza/tls/cadenza_sender.key
 *
 * A role without its own URL uses DATABASE_URL. `--database-url` on the command line wins over
 * both. Roles with different URLs cannot share one process (one pool, one login): the supervisor
 * runs one child per role on PostgreSQL, and `start --roles a,b` with two URLs is refused.
 */
export type RoleUrls = Pick<Config, 'DATABASE_URL' | 'CADENZA_DATABASE_URL_API' | 'CADENZA_DATABASE_URL_SCHEDULER' | 'CADENZA_DATABASE_URL_SENDER' | 'CADENZA_DATABASE_URL_SYNC'>;

const KEY: Record<Role, keyof RoleUrls> = {
  api: 'CADENZA_DATABASE_URL_API',
  scheduler: 'CADENZA_DATABASE_URL_SCHEDULER',
  sender: 'CADENZA_DATABASE_URL_SENDER',
  sync: 'CADENZA_DATABASE_URL_SYNC',
};

export function roleDatabaseUrl(roles: readonly Role[], cfg: RoleUrls, explicit?: string): string | undefined {
  if (explicit) return explicit;
  const urls = new Set(roles.map((r) => cfg[KEY[r]] ?? cfg.DATABASE_URL));
  if (urls.size > 1) {
    throw cadenzaError('CONFIG_INVALID', `roles ${roles.join(', ')} have different database URLs (${roles.map((r) => KEY[r]).join(', ')}), so they cannot run in one process: run them with --supervise, or start one process per role`);
  }
  const url = [...urls][0];
  // Some roles on PostgreSQL and this one on the embedded store would be two installations.
  if (url === undefined && anyDatabaseUrl(cfg)) {
    throw cadenzaError('CONFIG_INVALID', `role ${roles.join(', ')} has no database URL while others have one: set ${roles.map((r) => KEY[r]).join(', ')} or DATABASE_URL`);
  }
  return url;
}

/** Whether any role URL is set: then PostgreSQL is in use even without DATABASE_URL. */
export function anyDatabaseUrl(cfg: RoleUrls): boolean {
  return Boolean(cfg.DATABASE_URL || Object.values(KEY).some((k) => cfg[k]));
}

/**
 * The environment that gives a supervised child `url` whatever its own environment holds: the
 * child resolves its URL again with roleDatabaseUrl, so its roles' own keys are set to the same URL.
 */
export function roleUrlEnv(roles: readonly Role[], url: string): Record<string, string> {
  return { DATABASE_URL: url, ...Object.fromEntries(roles.map((r) => [KEY[r], url])) };
}
