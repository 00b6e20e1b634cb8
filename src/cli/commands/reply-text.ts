import type { Command } from 'commander';
import { replyTextFromFile } from '../../ingest/reply-text/from-file.ts';

/** `cadenza reply-text FILE...`: one JSON line per file with the new text of the reply. */
export function register(program: Command): void {
  program
    .command('reply-text')
    .argument('<files...>', '.eml messages, or bare .txt/.html bodies')
    .option('--from <sender>', "the sender of bare bodies (\"Name <addr>\"), to find a signature holding the sender's name")
    .action(async (files: string[], o: { from?: string }) => {
      for (const file of files) {
        const { row } = await replyTextFromFile(file, { from: o.from ?? null });
        process.stdout.write(`${JSON.stringify(row)}\n`);
      }
    });
}
