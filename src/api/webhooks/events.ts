/**
 * The events an endpoint may subscribe to; the triggers in 0009_webhooks.sql emit them. Free of
 * imports so that the web app's form can list them from here rather than keep its own copy.
 */
export const webhookEvents = ['reply', 'bounce', 'unsubscribe', 'sent', 'opened', 'clicked', 'task.due'] as const;
export type WebhookEvent = (typeof webhookEvents)[number];
