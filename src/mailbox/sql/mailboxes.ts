/**
 * Mailbox rows as people add, find and change them (the API and the CLI). A removed mailbox
 * (removed_at set, sending/mailbox-removal.ts) keeps its row for history and is never found here.
 */
import type { Insertable, Updateable } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import type { MailboxTable } from '../../store/schema.ts';
import type { Db, Tx } from '../../store/store.ts';

/** Whether the workspace has or had this mailbox (a removed one keeps its row and its history, which the analytics still show). */
export async function mailboxOfWorkspace(db: Db, workspaceId: string, mailboxId: string): Promise<boolean> {
  const r = await db.selectFrom('mailbox').select('id').where('workspace_id', '=', workspaceId).where('id', '=', mailboxId).executeTakeFirst();
  return r !== undefined;
}

/** The live mailbox of the workspace with its owner (null: nobody's, an admin's to change), or undefined. */
export async function findMailbox(db: Db, workspaceId: string, mailboxId: string) {
  return db
    .selectFrom('mailbox')
    .select(['id', 'email', 'user_id', 'settings'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', mailboxId)
    .where('removed_at', 'is', null)
    .executeTakeFirst();
}

/** The id of the workspace's live mailbox with this address (stored lower-cased), or undefined. */
export async function mailboxIdByEmail(db: Db, workspaceId: string, email: string): Promise<string | undefined> {
  const r = await db.selectFrom('mailbox').select('id').where('workspace_id', '=', workspaceId).where('email', '=', email.toLowerCase()).where('removed_at', 'is', null).executeTakeFirst();
  return r?.id;
}

/** Adds a mailbox row (its credential is the vault's to store, in the same transaction); CONFLICT when the workspace has the address connected. */
export async function insertMailbox(db: Db | Tx, row: Insertable<MailboxTable>): Promise<void> {
  await db
    .insertInto('mailbox')
    .values(row)
    .execute()
    .catch((e: { code?: string }) => {
      if (e.code === '23505') throw cadenzaError('CONFLICT', `mailbox ${row.email} is already connected`);
      throw e;
    });
}

/** The columns a person changes on a mailbox: name, caps, ramp, time zone, signature. */
export type MailboxChange = Partial<Pick<Updateable<MailboxTable>, 'display_name' | 'daily_cap' | 'hourly_cap' | 'ramp' | 'ramp_started_at' | 'time_zone' | 'signature_html' | 'signature_text'>>;

/** Sets the given columns of the mailbox (nothing when none is given). */
export async function updateMailbox(db: Db, mailboxId: string, set: MailboxChange): Promise<void> {
  if (Object.keys(set).length) await db.updateTable('mailbox').set(set).where('id', '=', mailboxId).execute();
}

/** Id and address of these mailboxes, by address. */
export async function mailboxAddresses(db: Db, ids: readonly string[]): Promise<Array<{ id: string; email: string }>> {
  if (ids.length === 0) return [];
  return db.selectFrom('mailbox').select(['id', 'email']).where('id', 'in', [...ids]).orderBy('email').execute();
}

/** A sequence's pool: the workspace's live mailboxes with these addresses (all of them for an empty pool), by address. */
export async function poolMailboxes(db: Db, workspaceId: string, emails: readonly string[]) {
  let q = db.selectFrom('mailbox').select(['id', 'email', 'display_name', 'signature_html', 'signature_text']).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).orderBy('email');
  if (emails.length) q = q.where('email', 'in', [...emails]);
  return q.execute();
}
