import { Command, Help } from 'commander';
import { version } from '../common/version.ts';
import { commandName, commands, type CommandEntry } from './commands/index.ts';

/** The program and its global options, with no command yet. */
function baseProgram(): Command {
  return new Command('cadenza')
    .description('Cadenza: open-source sales engagement, sent from your reps\' own mailboxes')
    .version(version)
    .option('--json', 'print results as JSON')
    .option('--database-url <url>', 'PostgreSQL URL (env DATABASE_URL); without it the embedded store is used')
    .option('--data-dir <dir>', 'folder of the embedded store (env CADENZA_DATA_DIR, default ./data)')
    .showHelpAfterError()
    .configureOutput({ outputError: (s, write) => write(s) });
}

const globalsWithValue = new Set(['--database-url', '--data-dir']);

/** The command named on the line (`cadenza [globals] NAME …`, or `cadenza help NAME`), if any. */
export function commandOnLine(args: readonly string[]): CommandEntry | undefined {
  const operands: string[] = [];
  for (let i = 0; i < args.length && operands.length < 2; i++) {
    const a = args[i]!;
    if (globalsWithValue.has(a)) i++;
    else if (!a.startsWith('-')) operands.push(a);
  }
  const name = operands[0] === 'help' ? operands[1] : operands[0];
  return commands.find((e) => commandName(e) === name);
}

/**
 * The `cadenza` command with the given commands loaded (one file each in commands/, listed in
 * commands/index.ts); the others are listed for `--help` and for commander's "did you mean", with
 * nothing of theirs imported.
 */
export async function buildProgram(load: readonly CommandEntry[] = commands): Promise<Command> {
  const program = baseProgram();
  // The listing shows each command as the registry spells it, loaded or not, so that it reads the same either way.
  const usage = new Map(commands.map((e) => [commandName(e), e.usage]));
  program.configureHelp({ subcommandTerm: (cmd) => usage.get(cmd.name()) ?? new Help().subcommandTerm(cmd) });
  for (const entry of commands) {
    if (load.includes(entry)) (await entry.load()).register(program);
    else program.command(entry.usage);
    program.commands.find((c) => c.name() === commandName(entry))!.description(entry.description);
  }
  return program;
}
