/**
 * Slack posts' statements: claim the due ones (skip locked; the claim pushes next_attempt_at past
 * the POST's deadline, so a process that dies mid-POST leaves it to another once the claim lapses),
 * with the event and the member's sealed URL, then record each outcome.
 */
import { sql } from 'kysely';
import type { Db } from '../../../store/store.ts';
import type { NotificationKind } from '../kinds.ts';

export interface ClaimedPost {
  id: number;
  workspaceId: string;
  userId: string;
  attempts: number;
  kind: NotificationKind;
  title: string;
  body: string;
  link: string;
  urlSealed: Buffer | null;
}

// -- name: notify-slack-claim
export async function claimPosts(db: Db, now: Date, claimUntil: Date, limit: number): Promise<ClaimedPost[]> {
  const r = await sql<{ id: number; workspace_id: string; user_id: string; attempts: number; kind: NotificationKind; title: string; body: string; link: string; slack_url_sealed: Buffer | null }>`
    update notification_slack p
    set attempts = p.attempts + 1, next_attempt_at = ${claimUntil}
    from (select id from notification_slack
          where state = 'pending' and next_attempt_at <= ${now}
          order by next_attempt_at limit ${limit}
          for update skip locked) c,
         notification_event e
    where p.id = c.id and e.id = p.event_id
    returning p.id, p.workspace_id, p.user_id, p.attempts, e.kind, e.title, e.body, e.link,
      (select s.slack_url_sealed from notification_setting s where s.workspace_id = p.workspace_id and s.user_id = p.user_id and s.slack_disabled_at is null) as slack_url_sealed`.execute(db);
  return r.rows.map((x) => ({ id: Number(x.id), workspaceId: x.workspace_id, userId: x.user_id, attempts: Number(x.attempts), kind: x.kind, title: x.title, body: x.body, link: x.link, urlSealed: x.slack_url_sealed }));
}

// -- name: notify-slack-outcome
export async function recordPost(db: Db, id: number, o: { state: 'pending' | 'delivered' | 'failed'; code: number | null; error: string | null; next: Date; deliveredAt?: Date }): Promise<void> {
  await db
    .updateTable('notification_slack')
    .set({ state: o.state, response_code: o.code, last_error: o.error, next_attempt_at: o.next, ...(o.deliveredAt ? { delivered_at: o.deliveredAt } : {}) })
    .where('id', '=', id)
    .execute();
}

/**
 * The member's webhook answered that it is gone: disabled with the reason (shown in Settings), and
 * their posts still waiting failed with it, in one transaction. Only the URL that answered is
 * disabled: one saved since (another sealed value) is left alone. True when this call disabled it.
 */
// -- name: notify-slack-disable
export async function disableSlack(db: Db, workspaceId: string, userId: string, sealed: Buffer, reason: string, now: Date): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const r = await tx
      .updateTable('notification_setting')
      .set({ slack_disabled_at: now, slack_disabled_reason: reason })
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .where('slack_url_sealed', '=', sealed)
      .where('slack_disabled_at', 'is', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await tx.updateTable('notification_slack').set({ state: 'failed', last_error: reason, next_attempt_at: now }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).where('state', '=', 'pending').execute();
    return true;
  });
}
