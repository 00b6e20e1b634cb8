import { DEFAULT_CHANNELS, kindsFor, type Channels, type NotificationKind, type Scope } from './kinds.ts';

/**
 * Who hears of an event, and where (pure: the fan-out's rule, fanout.ts applies it). A member hears
 * of the events of their own mailboxes, and of those nobody owns; with scope 'all', of every event
 * of the workspace. Then their channels for the event's kind: in the bell, in the browser (which
 * reads the bell, so it needs in_app's row even when the bell itself is off), in the next digest,
 * on Slack (only with a URL set). A kind about the workspace's settings (kinds.ts ADMIN_KINDS)
 * reaches its admins and owners only.
 */
export interface PlanEvent {
  id: number;
  kind: NotificationKind;
  userId: string | null;
}

export interface PlanMember {
  userId: string;
  role: string;
  scope: Scope;
  channels: Partial<Record<NotificationKind, Channels>>;
  hasSlack: boolean;
}

export interface Delivery {
  eventId: number;
  userId: string;
  inApp: boolean;
  browser: boolean;
  email: boolean;
  slack: boolean;
}

export function planDeliveries(events: readonly PlanEvent[], members: readonly PlanMember[]): Delivery[] {
  const known = new Set(members.map((m) => m.userId));
  const out: Delivery[] = [];
  for (const e of events) {
    // An owner who is no longer a member leaves the event to everyone, as an unowned one.
    const owner = e.userId !== null && known.has(e.userId) ? e.userId : null;
    for (const m of members) {
      if (m.scope === 'mine' && owner !== null && owner !== m.userId) continue;
      if (!kindsFor(m.role).includes(e.kind)) continue;
      const c = m.channels[e.kind] ?? DEFAULT_CHANNELS;
      const d = { eventId: e.id, userId: m.userId, inApp: c.inApp, browser: c.browser, email: c.email, slack: c.slack && m.hasSlack };
      if (d.inApp || d.browser || d.email || d.slack) out.push(d);
    }
  }
  return out;
}
