// What the webhook routes accept and answer, free of imports so that the web app takes it from
// here rather than keep its own copy.

/** The events an endpoint may subscribe to; the triggers in 0009_webhooks.sql (and 0031, 0049, 0081) emit them. */
export const webhookEvents = ['reply', 'reply.interested', 'bounce', 'unsubscribe', 'sent', 'opened', 'clicked', 'task.due', 'call.logged', 'domain.health_changed'] as const;
export type WebhookEvent = (typeof webhookEvents)[number];

/** An endpoint as the routes show it: never its secret. */
export interface EndpointView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  createdAt: string;
}

export interface DeliveryView {
  id: number;
  eventId: string;
  eventType: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  responseCode: number | null;
  lastError: string | null;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}
