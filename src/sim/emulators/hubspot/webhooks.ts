import { systemClock, type Clock } from '../../../common/clock.ts';
import { hubspotV3Signature } from '../../../crm/webhooks/signature.ts';
import { WebhookDelivery, type Delivery, type WebhookFault } from '../webhook-delivery.ts';
import type { CrmRecord } from './store.ts';

/**
 * HubSpot's webhooks (developers.hubspot.com "Webhooks API"): set on the app, not per account, so
 * there is no API to register them here; a test configures the app's target URL and client secret
 * (configure()), as an admin does in the app's settings. Each change to a contact or a deal is
 * posted to the target as a JSON array of events ({eventId, subscriptionId, portalId, appId,
 * occurredAt, subscriptionType: 'contact.creation' | 'contact.propertyChange' | 'deal.…',
 * attemptNumber, objectId, changeSource, propertyName?, propertyValue?}), one event per delivery
 * here (HubSpot batches up to 100), signed v3: X-HubSpot-Signature-v3 over method + target URL +
 * body + X-HubSpot-Request-Timestamp with the client secret (signature.ts computes it for the
 * receiver as well, so the two cannot drift apart silently: the receiver's tests check it against
 * a hand-computed HMAC). Faults and retries are webhook-delivery.ts's. The timestamp is the real
 * time of the attempt (`signClock`): a delivery is a network event, whatever the emulator's clock.
 */
export class HubSpotWebhooks {
  private target: { url: string; clientSecret: string } | null = null;
  private readonly delivery: WebhookDelivery;
  private eventSeq = 1;

  constructor(
    private readonly portalId: number,
    private readonly signClock: Clock = systemClock,
    o: { retryDelaysMs?: readonly number[]; delayMs?: number } = {},
  ) {
    this.delivery = new WebhookDelivery(o);
  }

  configure(target: { url: string; clientSecret: string } | null): void {
    this.target = target;
  }

  get deliveries(): Delivery[] {
    return this.delivery.deliveries;
  }

  inject(fault: WebhookFault, times = 1): void {
    this.delivery.inject(fault, times);
  }

  /** The store's listener: a contact or a deal was created or changed. */
  changed(r: CrmRecord, action: 'creation' | 'propertyChange', properties: Record<string, string>): void {
    const t = this.target;
    if (!t || (r.type !== 'contacts' && r.type !== 'deals')) return;
    const object = r.type === 'contacts' ? 'contact' : 'deal';
    // One event per changed property, as HubSpot sends them; the first is enough to wake a reader.
    const [name, value] = Object.entries(properties)[0] ?? [undefined, undefined];
    const event = {
      eventId: this.eventSeq++,
      subscriptionId: object === 'contact' ? 101 : 102,
      portalId: this.portalId,
      appId: 5001,
      occurredAt: r.updatedAt,
      subscriptionType: `${object}.${action}`,
      attemptNumber: 0,
      objectId: Number(r.id),
      changeSource: 'CRM',
      ...(action === 'propertyChange' && name !== undefined ? { propertyName: name, propertyValue: value } : {}),
    };
    this.delivery.send(event.subscriptionId, t.url, [event], (text) => {
      const timestamp = String(this.signClock.now());
      return {
        'x-hubspot-signature-v3': hubspotV3Signature(t.clientSecret, 'POST', t.url, text, timestamp),
        'x-hubspot-request-timestamp': timestamp,
        'x-hubspot-signature-version': 'v3',
      };
    });
  }

  idle(): Promise<void> {
    return this.delivery.idle();
  }

  close(): Promise<void> {
    return this.delivery.close();
  }
}
