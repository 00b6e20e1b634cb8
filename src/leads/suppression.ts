import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { insertSuppressions } from '../ingest/store.ts';
import { stoppableEnrollment, type Applied, type EnrollmentService } from '../sequence/enrollment-service.ts';
import type { Store } from '../store/store.ts';
import { openCsv } from './csv-source.ts';
import { checkEmail } from './email.ts';

export type ManualReason = 'manual' | 'unsubscribe' | 'hard_bounce' | 'complaint';

export interface SuppressResult {
  /** Addresses newly suppressed (already suppressed ones keep their first reason). */
  added: number;
  /** Live enrollments of these addresses that were stopped. */
  stopped: number;
}

/**
 * Suppresses addresses in a workspace (promise 6: everywhere, every sequence, every future
 * import) and stops their live enrollments in the same transaction, as a bounce or an opt-out
 * found by ingestion would.
 */
export async function suppressAddresses(
  deps: { store: Store; service: EnrollmentService; clock: Clock },
  workspaceId: string,
  emailsNorm: string[],
  reason: ManualReason,
  source: string,
): Promise<SuppressResult> {
  const now = deps.clock.now();
  const unique = [...new Set(emailsNorm)];
  const { result, applied } = await deps.store.db.transaction().execute(async (tx) => {
    const before = await tx.selectFrom('suppression').select('email_norm').where('workspace_id', '=', workspaceId).where('email_norm', 'in', unique.length ? unique : ['']).execute();
    await insertSuppressions(tx, workspaceId, unique.map((email) => ({ email, reason, source })), now);
    const live = await sql<{ id: string; state: string }>`
      select e.id, e.state from enrollment e join lead l on l.id = e.lead_id
      where e.workspace_id = ${workspaceId} and l.email_norm = any(${unique}::text[]) and ${stoppableEnrollment}`.execute(tx);
    const applied: Applied[] = [];
    for (const { id } of live.rows) applied.push(...(await deps.service.applyInTx(tx, id, { type: 'stop', reason: 'address suppressed' }, now)));
    return { result: { added: unique.length - before.length, stopped: live.rows.filter((r) => r.state !== 'finished').length }, applied };
  });
  deps.service.notify(applied);
  return result;
}

export interface ImportIssue {
  line: number;
  value: string;
  message: string;
}

/**
 * The addresses of a suppression list: a CSV (any delimiter the lead import reads) whose column
 * named like "email" holds them, or a plain list with one address per line. Every row that is not
 * an address is reported with its line, never dropped silently.
 */
export async function readSuppressionList(text: string): Promise<{ emails: string[]; rejected: ImportIssue[] }> {
  const src = await openCsv(Readable.from([text]));
  const emails: string[] = [];
  const rejected: ImportIssue[] = [];
  let column = 0;
  let first = true;
  for await (const item of src.items) {
    if (item.kind === 'malformed') {
      rejected.push({ line: item.line, value: item.raw.slice(0, 200), message: item.message });
      continue;
    }
    if (first) {
      first = false;
      const named = item.fields.findIndex((f) => /^e-?mail(\s*address)?$/i.test(f.trim()));
      if (named >= 0) {
        column = named;
        continue;
      }
    }
    const value = (item.fields[column] ?? '').trim();
    if (value === '') continue;
    const c = checkEmail(value);
    if (c.ok) emails.push(c.norm);
    else rejected.push({ line: item.line, value: value.slice(0, 200), message: c.message });
  }
  return { emails, rejected };
}
