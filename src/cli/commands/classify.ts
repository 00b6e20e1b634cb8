import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { classifyRaw, type ClassifyRow } from '../../ingest/classify-file.ts';

/**
 * `cadenza classify FILE.eml...`: one JSON line per file with the ladder's verdict (label,
 * confidence, reason; recipient, status, hard_soft and bounce_class for bounces; return_date for
 * auto replies). The rules and the bundled model only: the optional LLM rung is not asked here.
 * A file that cannot be read or parsed gets a line with `error`; the exit code is then 1.
 */

export async function classifyFiles(files: string[], write: (line: string) => void): Promise<{ errors: number }> {
  let errors = 0;
  for (const file of files) {
    let row: ClassifyRow;
    try {
      row = (await classifyRaw(file, await readFile(file))).row;
    } catch (e) {
      row = { file, error: `cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
    }
    if (row.error) errors++;
    write(JSON.stringify(row));
  }
  return { errors };
}

/** Registered in main.ts as `register as classify`. */
export function register(program: Command): void {
  program
    .command('classify <files...>')
    .action(async (files: string[]) => {
      const { errors } = await classifyFiles(files, (line) => process.stdout.write(`${line}\n`));
      if (errors) process.exitCode = 1;
    });
}
