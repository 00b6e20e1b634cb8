import http from 'node:http';
import { closableSleep } from './closable-sleep.ts';

/**
 * Webhook deliveries as the CRMs make them, shared by the emulators that send webhooks
 * (pipedrive/webhooks.ts: basic auth; hubspot/webhooks.ts: the v3 signature): one POST per
 * delivery on its own connection, retried on a non-2xx answer or no answer after each of
 * `retryDelaysMs` (the CRMs wait seconds to minutes; tests need milliseconds).
 *
 * Faults, consumed one per delivery in order, for the receiver's tests: 'drop' (never sent),
 * 'duplicate' (sent twice), 'reorder' (held back and sent after the next delivery), 'delay' (sent
 * `delayMs` later). Real timers, not the emulator's clock: deliveries are network events a test
 * awaits with idle().
 */
export type WebhookFault = 'drop' | 'duplicate' | 'reorder' | 'delay';

export interface Delivery {
  /** The CRM's webhook (subscription) id, or the app's target. */
  webhookId: number | string;
  /** What is posted, as JSON: Pipedrive's object, HubSpot's array of events. */
  body: unknown;
  attempts: Array<number | 'error'>;
  fault: WebhookFault | null;
}

export class WebhookDelivery {
  readonly deliveries: Delivery[] = [];
  private faults: WebhookFault[] = [];
  private held: Array<() => void> = [];
  private inFlight = new Set<Promise<void>>();
  private timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly o: { retryDelaysMs?: readonly number[]; delayMs?: number } = {}) {}

  inject(fault: WebhookFault, times = 1): void {
    for (let i = 0; i < times; i++) this.faults.push(fault);
  }

  /**
   * Sends `body` to `url`; `headers` is asked at each attempt (a signature carries its attempt's
   * timestamp, as HubSpot's does).
   */
  send(webhookId: number | string, url: string, body: unknown, headers: (text: string) => Record<string, string>): void {
    if (this.closed) return;
    const fault = this.faults.shift() ?? null;
    const d: Delivery = { webhookId, body, attempts: [], fault };
    this.deliveries.push(d);
    if (fault === 'drop') return;
    const go = () => {
      this.track(this.deliver(url, d, headers));
      if (fault === 'duplicate') this.track(this.deliver(url, d, headers));
    };
    if (fault === 'reorder') {
      this.held.push(go);
      return;
    }
    if (fault === 'delay') {
      this.track(this.sleep(this.o.delayMs ?? 200).then((open) => (open ? go() : undefined)));
      return;
    }
    go();
    // Whatever was held back goes after this one.
    for (const later of this.held.splice(0)) later();
  }

  /** Resolves when nothing is being delivered; a delivery held back for a 'reorder' with nothing after it is sent first. */
  async idle(): Promise<void> {
    for (const later of this.held.splice(0)) later();
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    await Promise.allSettled([...this.inFlight]);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async deliver(url: string, d: Delivery, headers: (text: string) => Record<string, string>): Promise<void> {
    const delays = this.o.retryDelaysMs ?? [20, 40, 80];
    const text = JSON.stringify(d.body);
    for (let attempt = 0; attempt <= delays.length; attempt++) {
      if (attempt > 0 && !(await this.sleep(delays[attempt - 1]!))) return;
      const status = await post(url, text, headers(text));
      d.attempts.push(status ?? 'error');
      if (status !== null && status >= 200 && status < 300) return;
    }
  }

  private sleep(ms: number): Promise<boolean> {
    return closableSleep(this.timers, () => this.closed, ms);
  }
}

/** One POST on its own connection; the status, or null when no answer came. */
function post(url: string, body: string, extra: Record<string, string>): Promise<number | null> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { ...extra, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
    const req = http.request(url, { method: 'POST', agent: false, headers, timeout: 5000 });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(null));
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(null));
    });
    req.end(body);
  });
}
