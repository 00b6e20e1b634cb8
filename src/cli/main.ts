import { buildProgram, commandOnLine } from './program.ts';
import { reportError } from './report-error.ts';

// The `cadenza` command: only the module of the command on the line is imported (program.ts).
const args = process.argv.slice(2);
const named = commandOnLine(args);
buildProgram(named ? [named] : [])
  .then((program) => program.parseAsync(process.argv))
  .catch((e: unknown) => {
    process.exitCode = reportError(e, args.includes('--json'));
  });
