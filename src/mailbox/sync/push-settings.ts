import type { Config } from '../../common/config.ts';

/**
 * Push for Gmail and Graph mailboxes, from the configuration (docs/mailboxes.md "Push"). Off
 * without CADENZA_PUSH_SECRET: mailboxes are then polled. Gmail push needs the Pub/Sub topic
 * (CADENZA_GMAIL_PUBSUB_TOPIC) whose push subscription targets `/push/gmail?token=<secret>`;
 * Graph push needs a public https URL (Graph refuses to notify plain http), `/push/graph` under
 * CADENZA_PUBLIC_URL.
 */
export interface PushSettings {
  /** Checked on Gmail pushes (`?token=`) and the key of Graph's clientState (push-relay.ts). */
  secret: string;
  gmailTopic?: string;
  graphNotificationUrl?: string;
}

export function pushSettingsFrom(cfg: Pick<Config, 'CADENZA_PUSH_SECRET' | 'CADENZA_GMAIL_PUBSUB_TOPIC' | 'CADENZA_PUBLIC_URL'>): PushSettings | undefined {
  if (!cfg.CADENZA_PUSH_SECRET) return undefined;
  const base = cfg.CADENZA_PUBLIC_URL ? new URL(cfg.CADENZA_PUBLIC_URL.replace(/\/*$/, '/')) : null;
  return {
    secret: cfg.CADENZA_PUSH_SECRET,
    ...(cfg.CADENZA_GMAIL_PUBSUB_TOPIC ? { gmailTopic: cfg.CADENZA_GMAIL_PUBSUB_TOPIC } : {}),
    ...(base?.protocol === 'https:' ? { graphNotificationUrl: new URL('push/graph', base).href } : {}),
  };
}
