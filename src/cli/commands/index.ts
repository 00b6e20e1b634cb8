import type { Command } from 'commander';

/**
 * Every `cadenza` command, listed once: its usage and the one line `cadenza --help` shows, and the
 * module that declares its options and runs it. main.ts imports only the module of the command
 * being run (a `--help` listing imports none), so a command pays for its own dependencies alone:
 * `cadenza status` never loads the HTTP server, the mail connectors or the classifiers.
 */
export interface CommandEntry {
  /** As `cadenza --help` lists it: the name, `[options]` if it has any, its arguments (checked against the command itself by main.test.ts). */
  usage: string;
  description: string;
  load(): Promise<{ register(program: Command): void }>;
}

export const commands: readonly CommandEntry[] = [
  { usage: 'start [options]', description: 'run Cadenza: the API and web app on one port, and the scheduler (embedded store in ./data unless DATABASE_URL is set)', load: () => import('./start.ts') },
  { usage: 'migrate', description: 'apply pending database migrations (start does this too)', load: () => import('./migrate.ts') },
  { usage: 'import [options] <file>', description: 'import leads from a CSV file: columns matched by name or --map, each row validated, rejected rows written with their reason', load: () => import('./import.ts') },
  { usage: 'sequence', description: 'sequences: apply a definition file, export one, list', load: () => import('./sequence.ts') },
  { usage: 'phones', description: "leads' phone numbers: recheck reads stored numbers again (E.164 form, or flagged with a reason)", load: () => import('./phones.ts') },
  { usage: 'enroll [options]', description: 'enroll leads in a sequence in one operation; suppressed or already-enrolled leads are refused with a reason', load: () => import('./enroll.ts') },
  { usage: 'enrollments', description: 'enrollments: list them, or show one with its steps and journal', load: () => import('./enrollments.ts') },
  { usage: 'status [options]', description: 'what Cadenza holds and what is coming: leads, enrollments by state, the outbox, timers due soon', load: () => import('./status.ts') },
  { usage: 'workspace', description: 'workspaces: create, list, and the pacing defaults of their mailboxes', load: () => import('./workspace.ts') },
  { usage: 'mailbox', description: "reps' sending mailboxes: add, connect (Google, Microsoft) and list", load: () => import('./mailbox.ts') },
  { usage: 'warmup', description: 'the warmup network: peers (federation with other Cadenza installations): card, list, add, exchange, remove', load: () => import('./warmup.ts') },
  { usage: 'privacy', description: 'privacy: export everything stored about one address, or erase a person (docs/privacy.md)', load: () => import('./privacy.ts') },
  { usage: 'ca', description: 'the private CA for TLS between the role processes and PostgreSQL: init, issue (client CN = database role), rotate, retire, list', load: () => import('./ca.ts') },
  { usage: 'db', description: 'PostgreSQL administration as the superuser: the least-privilege roles and grants of the role processes', load: () => import('./db.ts') },
  { usage: 'backup [options]', description: "back up Cadenza's PostgreSQL cluster with pgBackRest; --list shows the backups and the instants a restore can reach", load: () => import('./backup.ts') },
  { usage: 'restore [options]', description: "restore Cadenza's PostgreSQL cluster to an instant (--to) with pgBackRest; then reconcile-sent --since the same instant", load: () => import('./restore.ts') },
  { usage: 'reconcile-sent [options]', description: "after a restore: record as sent the steps the mailboxes' Sent folders show went out since the restore point, so none is sent twice", load: () => import('./reconcile-sent.ts') },
  { usage: 'keys', description: 'the master key that protects stored credentials', load: () => import('./keys.ts') },
  { usage: 'dns [options] <domain>', description: "DNS records (SPF, DKIM, DMARC) for sending from a custom domain through Cadenza's relay; --check compares them with what is published", load: () => import('./dns.ts') },
  { usage: 'classify <files...>', description: 'classify mail files (.eml): reply, auto-reply, bounce (recipient, status, hard/soft), feedback…; one JSON line per file', load: () => import('./classify.ts') },
  { usage: 'reply-text [options] <files...>', description: 'print the new text of each reply, one JSON line per file: text (quoted history and signature removed) and withSignature (the signature kept)', load: () => import('./reply-text.ts') },
  { usage: 'demo [options]', description: 'a demo workspace on emulated Gmail and Microsoft 365 mailboxes: leads, two sequences and prospects who reply, bounce, go on holiday and unsubscribe, on an accelerated clock', load: () => import('./demo.ts') },
];

export const commandName = (e: CommandEntry): string => e.usage.split(' ')[0]!;
