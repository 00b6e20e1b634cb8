import type { PushDispatcher } from '../push.ts';

/**
 * The Cloud Pub/Sub part Gmail's push needs (guides/push): a topic users.watch publishes to, and
 * push subscriptions that POST each message to an endpoint. In a real project the subscription is
 * made once in the Cloud console; here a test makes it with createPushSubscription.
 *
 * Push body (cloud.google.com/pubsub/docs/push): `{message:{data, messageId, publishTime,
 * attributes}, subscription}`; `data` is base64. A 2xx acks; anything else is redelivered
 * (push.ts retries a few times).
 */
export class PubSubEmulator {
  private readonly topics = new Map<string, Array<{ name: string; pushEndpoint: string }>>();
  private seq = 0;

  constructor(
    private readonly push: PushDispatcher,
    private readonly clock: { now(): number },
  ) {}

  hasTopic(topic: string): boolean {
    return this.topics.has(topic);
  }

  createTopic(topic: string): void {
    if (!this.topics.has(topic)) this.topics.set(topic, []);
  }

  createPushSubscription(s: { topic: string; name: string; pushEndpoint: string }): void {
    this.createTopic(s.topic);
    this.topics.get(s.topic)!.push({ name: s.name, pushEndpoint: s.pushEndpoint });
  }

  publish(topic: string, payload: unknown): void {
    const subs = this.topics.get(topic) ?? [];
    const messageId = String(++this.seq + 1_000_000);
    const publishTime = new Date(this.clock.now()).toISOString();
    const data = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
    for (const s of subs) {
      this.push.notify(s.pushEndpoint, {
        message: { data, messageId, message_id: messageId, publishTime, publish_time: publishTime, attributes: {} },
        subscription: s.name,
      });
    }
  }
}
