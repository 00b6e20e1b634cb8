import { cadenzaError } from '../common/errors.ts';
import { checkEmail } from '../leads/email.ts';
import type { Db } from '../store/store.ts';
import type { Subject } from './sql/personal-data.ts';

/** The person an export or an erasure is about: the address checked and normalised, and their leads and enrollments in the workspace. */
export async function findSubject(db: Db, workspaceId: string, email: string): Promise<Subject> {
  const c = checkEmail(email);
  // The raw input is not repeated: it may be the very address being erased.
  if (!c.ok) throw cadenzaError('INVALID_INPUT', `email ${c.message}`, { field: 'email' });
  const leads = await db.selectFrom('lead').select('id').where('workspace_id', '=', workspaceId).where('email_norm', '=', c.norm).execute();
  const leadIds = leads.map((l) => l.id);
  const enrollments = leadIds.length ? await db.selectFrom('enrollment').select('id').where('lead_id', 'in', leadIds).execute() : [];
  return { workspaceId, email: c.norm, leadIds, enrollmentIds: enrollments.map((e) => e.id) };
}
