import type { Db } from '../../store/store.ts';

/**
 * The workspace's live mailboxes as the mailbox list shows them (the API and `cadenza mailbox
 * list`), by address, with their sync's last error and their warmup cap factor (placement, its
 * reason); and the workspace's zone and settings, which
 * give a mailbox without its own its time zone and caps (mailbox/pacing/mailbox.ts). `onlyId`: that
 * one mailbox.
 */
export async function listMailboxRows(db: Db, workspaceId: string, onlyId?: string) {
  const workspace = await db.selectFrom('workspace').select(['time_zone', 'settings']).where('id', '=', workspaceId).executeTakeFirstOrThrow();
  let q = db
    .selectFrom('mailbox as m')
    .leftJoin('mailbox_sync as s', 's.mailbox_id', 'm.id')
    .leftJoin('warmup_member as wm', 'wm.mailbox_id', 'm.id')
    .select(['m.id', 'm.email', 'm.display_name', 'm.provider', 'm.health', 'm.health_reason', 'm.daily_cap', 'm.hourly_cap', 'm.ramp', 'm.ramp_started_at', 'm.created_at', 'm.time_zone', 'm.settings', 'm.signature_html', 'm.signature_text', 's.last_error', 's.last_error_at', 'wm.cap_factor', 'wm.cap_reason'])
    .where('m.workspace_id', '=', workspaceId)
    .where('m.removed_at', 'is', null)
    .orderBy('m.email');
  if (onlyId) q = q.where('m.id', '=', onlyId);
  return { workspace, mailboxes: await q.execute() };
}
