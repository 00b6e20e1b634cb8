import { Command } from 'commander';
import { version } from '../ops/app.ts';
import { reportError } from './context.ts';
import { privateUmask } from '../common/private-files.ts';
import { register as classify } from './commands/classify.ts';
import { register as demo } from './commands/demo.ts';
import { register as dns } from './commands/dns.ts';
import { register as enroll } from './commands/enroll.ts';
import { register as enrollments } from './commands/enrollments.ts';
import { register as importCmd } from './commands/import.ts';
import { register as keys } from './commands/keys.ts';
import { register as mailbox } from './commands/mailbox.ts';
import { register as migrate } from './commands/migrate.ts';
import { register as replyText } from './commands/reply-text.ts';
import { register as sequence } from './commands/sequence.ts';
import { register as start } from './commands/start.ts';
import { register as status } from './commands/status.ts';
import { register as workspace } from './commands/workspace.ts';

/** The `cadenza` command: one file per command in commands/, registered here. */
export function buildProgram(): Command {
  const program = new Command('cadenza')
    .description('Cadenza: open-source sales engagement, sent from your reps\' own mailboxes')
    .version(version)
    .option('--json', 'print results as JSON')
    .option('--database-url <url>', 'PostgreSQL URL (env DATABASE_URL); without it the embedded store is used')
    .option('--data-dir <dir>', 'folder of the embedded store (env CADENZA_DATA_DIR, default ./data)')
    .showHelpAfterError()
    .configureOutput({ outputError: (s, write) => write(s) });
  for (const register of [start, migrate, importCmd, sequence, enroll, enrollments, status, workspace, mailbox, keys, dns, classify, replyText, demo]) register(program);
  return program;
}

// Everything Cadenza writes (the data folder, the embedded database, keys, reports) is the
// account's own from its first byte: group and others get no permission.
privateUmask();
const program = buildProgram();
program.parseAsync(process.argv).catch((e: unknown) => {
  process.exitCode = reportError(e, process.argv.includes('--json'));
});
