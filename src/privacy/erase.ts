import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import type { EnrollmentService } from '../sequence/enrollment-service.ts';
import { eraseSuppression } from '../sequence/suppress.ts';
import type { Store } from '../store/store.ts';
import { erasedMarker, type ErasureKey } from '../common/erasure-key.ts';
import { PERSONAL_TABLES } from './sql/personal-data.ts';
import { findSubject } from './subject.ts';

export interface ErasureDeps {
  store: Store;
  service: EnrollmentService;
  clock: Clock;
  key: ErasureKey;
}

export interface ErasureReport {
  /** What stands in the suppression list for the address from now on. */
  marker: string;
  /** Enrollments that were live and stopped before anything was deleted. */
  stopped: number;
  /** Rows deleted per export section (sections with none are left out). */
  deleted: Record<string, number>;
}

/**
 * Erases a person from a workspace, in one transaction:
 * 1. their live enrollments stop, and the suppression list gets the address's keyed hash in place
 *    of the address (sequence/suppress.ts eraseSuppression): from the commit on, no send is
 *    claimed for them (the outbox re-checks the enrollment and the claim takes its lock), and a
 *    later import or new lead of the address is refused (leads/erased.ts);
 * 2. every row the subject access export finds is deleted (sql/personal-data.ts), the lead last so
 *    its enrollments, sends, tasks and clicks go with it by cascade, and the journal rows and
 *    webhook deliveries the stops just wrote go too.
 * Refused (CONFLICT) while the address is a member's or a mailbox's of the workspace (remove those
 * first: erasure is for the people mailed), or while a message to them is being handed to a
 * server (try again in a minute: the handover ends with the message recorded, then erased).
 */
export async function eraseSubject(deps: ErasureDeps, workspaceId: string, email: string): Promise<ErasureReport> {
  const now = deps.clock.now();
  const { report, applied } = await deps.store.db.transaction().execute(async (tx) => {
    const s = await findSubject(tx, workspaceId, email);
    for (const t of PERSONAL_TABLES.filter((x) => x.erasure === 'refuse')) {
      if ((await t.find(tx, s)).length) throw cadenzaError('CONFLICT', `this address is one of the workspace's own (${t.section}): remove it there first; erasure is for the people the workspace mails`, { section: t.section });
    }
    if (s.enrollmentIds.length) {
      const busy = await tx.selectFrom('send_request').select('id').where('enrollment_id', 'in', s.enrollmentIds).where('state', '=', 'in_flight').executeTakeFirst();
      if (busy) throw cadenzaError('CONFLICT', 'a message to this person is being handed to the mail server right now; try again in a minute', { retry: true });
    }
    const marker = erasedMarker(deps.key, workspaceId, s.email);
    const applied = await eraseSuppression(tx, deps.service, workspaceId, s.email, marker, now);
    const deleted: Record<string, number> = {};
    // The lead last: its cascade takes what the other deletes find by its enrollments.
    const order = [...PERSONAL_TABLES.filter((t) => t.erasure === 'delete' && t.table !== 'lead'), ...PERSONAL_TABLES.filter((t) => t.table === 'lead')];
    for (const t of order) {
      const n = await t.del!(tx, s);
      if (n) deleted[t.section] = n;
    }
    return { applied, report: { marker, stopped: applied.filter((a) => a.result.outcome === 'applied').length, deleted } };
  });
  deps.service.notify(applied);
  return report;
}
