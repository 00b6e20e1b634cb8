import { privateUmask } from '../common/private-files.ts';
import { buildProgram, commandOnLine } from './program.ts';
import { reportError } from './report-error.ts';

// Everything Cadenza writes (the data folder, the embedded database, keys, reports) is the
// account's own from its first byte: group and others get no permission.
privateUmask();

// The `cadenza` command: only the module of the command on the line is imported (program.ts).
const args = process.argv.slice(2);
const named = commandOnLine(args);
buildProgram(named ? [named] : [])
  .then((program) => program.parseAsync(process.argv))
  .catch((e: unknown) => {
    process.exitCode = reportError(e, args.includes('--json'));
  });
