/**
 * A member's notification choices (notification_preference, notification_setting): per kind of
 * event, which channels; whose events; the digest's rhythm; the Slack URL, sealed (slack-url.ts).
 * No row: the defaults of kinds.ts.
 */
import type { Db } from '../../../store/store.ts';
import { DEFAULT_CHANNELS, NOTIFICATION_KINDS, type Channels, type DigestEvery, type NotificationKind, type Scope } from '../kinds.ts';

export interface MemberSettings {
  scope: Scope;
  digestEveryHours: DigestEvery;
  digestLastAt: Date | null;
  digestNextAt: Date | null;
  digestError: string | null;
  slackHost: string | null;
  slackConfigured: boolean;
  /** Why the webhook was disabled (it answered 404 or 410), null while it is in use. */
  slackDisabledReason: string | null;
}

export const DEFAULT_SETTINGS: MemberSettings = { scope: 'mine', digestEveryHours: 24, digestLastAt: null, digestNextAt: null, digestError: null, slackHost: null, slackConfigured: false, slackDisabledReason: null };

export async function readChannels(db: Db, workspaceId: string, userId: string): Promise<Record<NotificationKind, Channels>> {
  const rows = await db.selectFrom('notification_preference').selectAll().where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
  const out = Object.fromEntries(NOTIFICATION_KINDS.map((k) => [k, { ...DEFAULT_CHANNELS }])) as Record<NotificationKind, Channels>;
  for (const r of rows) out[r.kind] = { inApp: r.in_app, browser: r.browser, email: r.email, slack: r.slack };
  return out;
}

export async function readSettings(db: Db, workspaceId: string, userId: string): Promise<MemberSettings> {
  const r = await db
    .selectFrom('notification_setting')
    .select(['scope', 'digest_every_hours', 'digest_last_at', 'digest_next_at', 'digest_error', 'slack_host', 'slack_url_sealed', 'slack_disabled_reason'])
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!r) return { ...DEFAULT_SETTINGS };
  return {
    scope: r.scope,
    digestEveryHours: r.digest_every_hours,
    digestLastAt: r.digest_last_at,
    digestNextAt: r.digest_next_at,
    digestError: r.digest_error,
    slackHost: r.slack_host,
    slackConfigured: r.slack_url_sealed !== null,
    slackDisabledReason: r.slack_url_sealed !== null ? r.slack_disabled_reason : null,
  };
}

// -- name: notify-save-preferences
export async function saveChoices(db: Db, workspaceId: string, userId: string, p: { kinds: Partial<Record<NotificationKind, Channels>>; scope: Scope; digestEveryHours: DigestEvery }, now: Date): Promise<void> {
  await db.transaction().execute(async (tx) => {
    for (const [kind, c] of Object.entries(p.kinds) as Array<[NotificationKind, Channels]>) {
      await tx
        .insertInto('notification_preference')
        .values({ workspace_id: workspaceId, user_id: userId, kind, in_app: c.inApp, browser: c.browser, email: c.email, slack: c.slack })
        .onConflict((oc) => oc.columns(['workspace_id', 'user_id', 'kind']).doUpdateSet({ in_app: c.inApp, browser: c.browser, email: c.email, slack: c.slack }))
        .execute();
    }
    await tx
      .insertInto('notification_setting')
      .values({ workspace_id: workspaceId, user_id: userId, scope: p.scope, digest_every_hours: p.digestEveryHours, updated_at: now })
      .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doUpdateSet({ scope: p.scope, digest_every_hours: p.digestEveryHours, updated_at: now }))
      .execute();
  });
}

/** Stores the sealed Slack URL (or removes it: null) and its host, the one part shown back; a new URL (or none) lifts a disablement. */
// -- name: notify-save-slack
export async function saveSlackUrl(db: Db, workspaceId: string, userId: string, sealed: Buffer | null, host: string | null, now: Date): Promise<void> {
  await db
    .insertInto('notification_setting')
    .values({ workspace_id: workspaceId, user_id: userId, slack_url_sealed: sealed, slack_host: host, slack_disabled_at: null, slack_disabled_reason: null, updated_at: now })
    .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doUpdateSet({ slack_url_sealed: sealed, slack_host: host, slack_disabled_at: null, slack_disabled_reason: null, updated_at: now }))
    .execute();
  // Posts still waiting for a URL that is gone have nowhere to go.
  if (sealed === null) await db.updateTable('notification_slack').set({ state: 'failed', last_error: 'the Slack URL was removed' }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).where('state', '=', 'pending').execute();
}
