import { cadenzaError } from '../../common/errors.ts';
import { pgTargetText } from './target-time.ts';

/**
 * The pgBackRest command lines Cadenza runs (run-pgbackrest.ts runs them) and what it reads back.
 *
 * pgBackRest (pgbackrest.org, Debian package `pgbackrest`) does the work of point-in-time recovery:
 * PostgreSQL hands it every WAL segment (archive_command = 'pgbackrest … archive-push %p'), it
 * takes the base backups, and it restores a cluster to any instant the backups and the archive
 * cover. Cadenza only calls it with the options below (docs/operations.md, "Point-in-time
 * recovery"); which repository, which cluster and how it is reached are pgBackRest's own
 * configuration (/etc/pgbackrest/pgbackrest.conf, or --config), under the stanza named here.
 */
export interface PgBackRestTarget {
  /** The stanza: pgBackRest's name for the cluster and its backups ('cadenza' unless told). */
  stanza: string;
  /** pgBackRest's configuration file; absent: its default. */
  config?: string;
  /** Run pgBackRest as this account (sudo-less: only when Cadenza runs as root), as the cluster's files belong to it. */
  asUser?: string;
}

export type BackupType = 'full' | 'diff' | 'incr';

function common(t: PgBackRestTarget): string[] {
  return [`--stanza=${t.stanza}`, ...(t.config ? [`--config=${t.config}`] : []), '--log-level-console=warn'];
}

export function backupArgs(t: PgBackRestTarget, type: BackupType): string[] {
  return [...common(t), 'backup', `--type=${type}`];
}

export function infoArgs(t: PgBackRestTarget): string[] {
  return [...common(t), 'info', '--output=json'];
}

/**
 * A restore to `at`: replay the WAL up to that instant and stop there, then promote (open for
 * writes on a new timeline, so the WAL written after the restore point is never replayed into it).
 * --delta rewrites only the files that differ from the backup (checksums), so a restore over the
 * existing cluster takes the time of what changed, not of the whole database.
 */
export function restoreArgs(t: PgBackRestTarget, at: number): string[] {
  return [...common(t), 'restore', '--delta', '--type=time', `--target=${pgTargetText(at)}`, '--target-action=promote'];
}

/** The command line that runs pgBackRest with `args`, as `asUser` when Cadenza runs as root. */
export function pgbackrestCommand(args: string[], asUser: string | undefined, uid: number | undefined): [string, string[]] {
  if (asUser && uid === 0) return ['runuser', ['-u', asUser, '--', 'pgbackrest', ...args]];
  return ['pgbackrest', args];
}

/** One pgBackRest backup as `info` lists it. */
export interface BackupSummary {
  label: string;
  type: string;
  startedAt: string;
  stoppedAt: string;
  /** Size of the database at the backup, and what this backup stored in the repository (compressed). */
  databaseBytes: number;
  repositoryBytes: number;
}

export interface StanzaSummary {
  stanza: string;
  status: string;
  backups: BackupSummary[];
  /** The WAL archive: the oldest and newest segment kept (what a restore can replay). */
  archive: { min: string | null; max: string | null };
  /** A restore can reach any instant from here (the end of the oldest backup) to the newest archived WAL. */
  restorableFrom: string | null;
}

/** `pgbackrest info --output=json` for one stanza, reduced to what an operator reads. */
export function summariseInfo(json: unknown, stanza: string): StanzaSummary {
  const list = Array.isArray(json) ? (json as Array<Record<string, any>>) : [];
  const s = list.find((x) => x?.name === stanza);
  if (!s) throw cadenzaError('NOT_FOUND', `pgBackRest has no stanza '${stanza}' (create it with pgbackrest stanza-create, docs/operations.md)`);
  const iso = (sec: unknown) => (typeof sec === 'number' ? new Date(sec * 1000).toISOString() : '');
  const backups: BackupSummary[] = (s.backup ?? []).map((b: Record<string, any>) => ({
    label: String(b.label),
    type: String(b.type),
    startedAt: iso(b.timestamp?.start),
    stoppedAt: iso(b.timestamp?.stop),
    databaseBytes: Number(b.info?.size ?? 0),
    repositoryBytes: Number(b.info?.repository?.delta ?? b.info?.repository?.size ?? 0),
  }));
  const archive = (s.archive ?? [])[0] ?? {};
  return {
    stanza,
    status: String(s.status?.message ?? 'unknown'),
    backups,
    archive: { min: archive.min ?? null, max: archive.max ?? null },
    restorableFrom: backups[0]?.stoppedAt ?? null,
  };
}
