import type { Command } from 'commander';
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import { resolveWorkspace } from '../../ops/workspace.ts';
import { isValidZone } from '../../sequence/calendar/index.ts';
import { deps, globals, output, table, withStore } from '../context.ts';

const addSchema = z.object({
  email: z.string().email(),
  provider: z.enum(['smtp_imap', 'gmail', 'graph']),
  dailyCap: z.coerce.number().int().min(0).max(10_000),
  zone: z.string().optional(),
});

export function register(program: Command): void {
  const mb = program.command('mailbox').description("reps' sending mailboxes: add and list (credentials are connected from the web app)");
  mb.command('list')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .action(async (o: { workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const rows = await store.db.selectFrom('mailbox').select(['id', 'email', 'provider', 'daily_cap', 'health', 'time_zone']).where('workspace_id', '=', w.id).orderBy('email').execute();
        output(g, rows, () => table(rows));
      });
    });
  mb.command('add <email>')
    .description('register a mailbox')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--provider <p>', 'smtp_imap, gmail or graph', 'smtp_imap')
    .option('--daily-cap <n>', 'most emails a day once ramped up', '30')
    .option('--zone <iana>', "the mailbox's time zone (fallback for leads without one)")
    .action(async (email: string, o: { workspace?: string; provider: string; dailyCap: string; zone?: string }, cmd: Command) => {
      const g = globals(cmd);
      const r = addSchema.safeParse({ email, provider: o.provider, dailyCap: o.dailyCap, zone: o.zone });
      if (!r.success) throw cadenzaError('INVALID_INPUT', r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      if (r.data.zone && !isValidZone(r.data.zone)) throw cadenzaError('UNKNOWN_TIME_ZONE', `unknown time zone '${r.data.zone}'`);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const id = newId(deps.clock.now(), deps.random);
        await store.db
          .insertInto('mailbox')
          .values({ id, workspace_id: w.id, email: r.data.email.toLowerCase(), provider: r.data.provider, daily_cap: r.data.dailyCap, time_zone: r.data.zone ?? null })
          .execute()
          .catch((e: { code?: string }) => {
            if (e.code === '23505') throw cadenzaError('CONFLICT', `mailbox ${email} already exists`);
            throw e;
          });
        output(g, { id, email: r.data.email.toLowerCase() }, () => `mailbox ${r.data.email} added (${id})`);
      });
    });
}
