import type { Command } from 'commander';
import type { PgBackRestTarget } from '../../ops/pitr/pgbackrest.ts';

/** The pgBackRest options `cadenza backup` and `cadenza restore` share (ops/pitr/pgbackrest.ts). */
export function pgBackRestOptions(c: Command): Command {
  return c
    .option('--stanza <name>', "pgBackRest's stanza for Cadenza's cluster", process.env.PGBACKREST_STANZA ?? 'cadenza')
    .option('--config <file>', "pgBackRest's configuration file (default: pgBackRest's own, or PGBACKREST_CONFIG)")
    .option('--as-user <account>', "when run as root, run pgBackRest as this account (the cluster's owner, usually postgres)");
}

export function pgBackRestTarget(o: { stanza: string; config?: string; asUser?: string }): PgBackRestTarget {
  return { stanza: o.stanza, ...(o.config ? { config: o.config } : {}), ...(o.asUser ? { asUser: o.asUser } : {}) };
}
