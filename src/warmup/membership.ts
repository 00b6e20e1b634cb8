/**
 * Opting a mailbox in and out of the warmup network, and the receiving side's record of where a
 * warmup mail landed. Every call names its workspace: a mailbox of another workspace is NOT_FOUND,
 * as if it did not exist.
 */
import { sql } from 'kysely';
import { cadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Conn } from '../store/in-tx.ts';
import { PLACEMENT_REASON_PREFIX } from './placement/assess.ts';

export interface WarmupMembership {
  mailboxId: string;
  enabled: boolean;
  pool: string | null;
  target: number | null;
  joinedAt: Date | null;
  capFactor: number;
  capReason: string | null;
}

const MAX_TARGET = 200;

async function mailboxIn(db: Conn, workspaceId: string, mailboxId: string): Promise<void> {
  const mb = await db.selectFrom('mailbox').select('id').where('id', '=', mailboxId).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).executeTakeFirst();
  // The id is not echoed: the caller may have guessed another workspace's.
  if (!mb) throw cadenzaError('NOT_FOUND', 'no such mailbox in this workspace');
}

export async function getWarmup(db: Conn, workspaceId: string, mailboxId: string): Promise<WarmupMembership> {
  await mailboxIn(db, workspaceId, mailboxId);
  const m = await db.selectFrom('warmup_member').selectAll().where('mailbox_id', '=', mailboxId).executeTakeFirst();
  if (!m) return { mailboxId, enabled: false, pool: null, target: null, joinedAt: null, capFactor: 1, capReason: null };
  return { mailboxId, enabled: true, pool: m.pool, target: m.target, joinedAt: m.joined_at, capFactor: m.cap_factor, capReason: m.cap_reason };
}

/**
 * Opts in (or changes the target of a member: its ramp keeps its start), or opts out (the member
 * row goes; its mail stays for placement history). Target: the daily warmup volume, 1–200.
 */
export async function setWarmup(db: Conn, workspaceId: string, mailboxId: string, change: { enabled: boolean; target?: number }, now: number): Promise<WarmupMembership> {
  if (change.target !== undefined && !(Number.isInteger(change.target) && change.target >= 1 && change.target <= MAX_TARGET)) {
    throw cadenzaError('INVALID_INPUT', `target must be an integer from 1 to ${MAX_TARGET}`, { field: 'target', input: change.target });
  }
  await mailboxIn(db, workspaceId, mailboxId);
  if (!change.enabled) {
    await db.deleteFrom('warmup_member').where('mailbox_id', '=', mailboxId).execute();
    // Placement is no longer judged (placement/placement-role.ts passes members only): its warning goes with it; a pause stays for a person.
    await db.updateTable('mailbox').set({ health: 'ok', health_reason: null }).where('id', '=', mailboxId).where('health', '=', 'warning').where('health_reason', 'like', `${PLACEMENT_REASON_PREFIX}%`).execute();
  } else {
    await db
      .insertInto('warmup_member')
      .values({ mailbox_id: mailboxId, workspace_id: workspaceId, joined_at: new Date(now), ...(change.target !== undefined ? { target: change.target } : {}) })
      .onConflict((oc) => (change.target !== undefined ? oc.column('mailbox_id').doUpdateSet({ target: change.target }) : oc.column('mailbox_id').doNothing()))
      .execute();
  }
  return getWarmup(db, workspaceId, mailboxId);
}

export interface WarmupReceipt {
  pool: string;
  kind: 'first' | 'reply';
  messageId: string;
  inReplyTo?: string;
  senderAddress: string;
  receiverMailboxId: string;
  receiverAddress: string;
  folder: 'inbox' | 'junk';
  at: number;
  /** The peer installation whose member sent it (federation/): its placement is reported back. */
  peerId?: string;
}

// -- name: record-warmup-receipt
// The sender's row when it is ours (same installation), else a new row for a remote sender. The
// first receipt wins: a resync that reads the mail again (after it was moved to the inbox) must
// not turn a junk placement into an inbox one.
const receiptSql = (r: WarmupReceipt, id: string) => sql`
  insert into warmup_mail (id, pool, kind, message_id, in_reply_to, sender_address, receiver_mailbox_id, receiver_address, planned_at, received_at, received_folder, peer_id)
  values (${id}, ${r.pool}, ${r.kind}, ${r.messageId}, ${r.inReplyTo ?? null}, ${r.senderAddress}, ${r.receiverMailboxId}, ${r.receiverAddress}, ${new Date(r.at)}, ${new Date(r.at)}, ${r.folder}, ${r.peerId ?? null})
  on conflict (message_id) do update
    set received_at = excluded.received_at, received_folder = excluded.received_folder, receiver_mailbox_id = excluded.receiver_mailbox_id
    where warmup_mail.received_folder is null`;

export async function recordWarmupReceipt(db: Conn, r: WarmupReceipt, random: Random): Promise<void> {
  await receiptSql(r, newId(r.at, random)).execute(db);
}
