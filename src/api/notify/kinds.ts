import type { NotificationKind } from '../../store/schema.ts';

/**
 * What a person can be told (0099_notifications.sql, 0136's meetings) and where: the kinds of event, the channels,
 * and the choice a member has made before choosing anything (in the app and the browser, no mail,
 * no Slack: the quiet channels are asked for, never assumed).
 */
export const NOTIFICATION_KINDS = ['reply_positive', 'meeting_booked', 'task_due', 'mailbox_attention', 'sso_attention'] as const satisfies readonly NotificationKind[];
export type { NotificationKind };

export const KIND_LABELS: Record<NotificationKind, string> = {
  reply_positive: 'A prospect replies with interest or asks to meet',
  meeting_booked: 'A meeting is booked',
  task_due: 'A call or manual task is due',
  mailbox_attention: 'A mailbox needs attention',
  sso_attention: 'Single sign-on needs attention',
};

/**
 * Kinds about the workspace's settings, which only its admins and owners can act on: only they
 * hear of them (plan.ts), and only they see them among their choices. An SSO domain that lost its
 * proof (0130) is one.
 */
export const ADMIN_KINDS: readonly NotificationKind[] = ['sso_attention'];

/** The kinds a member of this role hears of and chooses channels for. */
export function kindsFor(role: string): readonly NotificationKind[] {
  return role === 'admin' || role === 'owner' ? NOTIFICATION_KINDS : NOTIFICATION_KINDS.filter((k) => !ADMIN_KINDS.includes(k));
}

export interface Channels {
  inApp: boolean;
  browser: boolean;
  email: boolean;
  slack: boolean;
}

export const DEFAULT_CHANNELS: Channels = { inApp: true, browser: true, email: false, slack: false };

/** The digest's rhythm, in hours. */
export const DIGEST_EVERY_HOURS = [1, 4, 24] as const;
export type DigestEvery = (typeof DIGEST_EVERY_HOURS)[number];

/** Whose events a member hears of: their own mailboxes' (and the workspace's unowned ones), or everyone's. */
export type Scope = 'mine' | 'all';
