import { Readable } from 'node:stream';
import type { Clock } from '../common/clock.ts';
import type { EnrollmentService } from '../sequence/enrollment-service.ts';
import { suppress } from '../sequence/suppress.ts';
import type { Db, Store } from '../store/store.ts';
import { openCsv } from './csv-source.ts';
import { checkEmail } from './email.ts';
import { suppressionPage, suppressionsInOrder, type SuppressionPageQuery, type SuppressionRow } from './sql/suppression-list.ts';

/**
 * The workspace's suppression list as people handle it (the API's suppression routes): add an
 * address or a whole list by hand, read a CSV of them, page through and export the list. The
 * writing itself is sequence/suppress.ts suppress(), the one owner of promise 6.
 */

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
  const done = await deps.store.db.transaction().execute((tx) => suppress(tx, deps.service, workspaceId, unique.map((email) => ({ email, reason, source })), { now }));
  deps.service.notify(done.applied);
  return { added: done.added.length, stopped: done.stopped.length };
}

/** One page of the list, in address order (`nextAfter` continues it). */
export async function listSuppressions(db: Db, workspaceId: string, q: SuppressionPageQuery): Promise<{ rows: SuppressionRow[]; nextAfter: string | null }> {
  const rows = await suppressionPage(db, workspaceId, { ...q, limit: q.limit + 1 });
  const page = rows.slice(0, q.limit);
  return { rows: page, nextAfter: rows.length > q.limit ? page[page.length - 1]!.email_norm : null };
}

/** The whole list, in address order (the CSV export). */
export function allSuppressions(db: Db, workspaceId: string): Promise<SuppressionRow[]> {
  return suppressionsInOrder(db, workspaceId);
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
