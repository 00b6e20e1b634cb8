import http from 'node:http';
import { closableSleep } from './closable-sleep.ts';

/**
 * Outgoing push for the emulators: Gmail's Pub/Sub push deliveries and Graph's change
 * notifications and validation requests are HTTP POSTs from the provider to a URL the client
 * registered. This posts them over loopback, with the faults the providers document
 * (notifications may be dropped, duplicated, delayed; gmail-api.md "Push", microsoft-graph-mail.md
 * "Change notifications") and the redelivery both promise when the answer is not 2xx.
 *
 * Real timers, not the emulator's clock: these are network events, and a test waits for them with
 * `idle()` rather than by moving a SimClock.
 */
export type PushFault = { kind: 'drop' } | { kind: 'duplicate' } | { kind: 'delay'; ms: number };

export interface PushRecord {
  url: string;
  body: unknown;
  /** The answer's status for each attempt, or 'error' when no answer came. */
  attempts: Array<number | 'error'>;
  fault: PushFault['kind'] | null;
}

export interface PushOptions {
  /** Attempts per notification while the answer is not 2xx (the providers retry for hours; tests need few). */
  maxAttempts?: number;
  /** Wait before a redelivery, doubled each time. */
  retryDelayMs?: number;
  /** Deadline of one POST. */
  timeoutMs?: number;
}

export class PushDispatcher {
  private faults: PushFault[] = [];
  private inFlight = new Set<Promise<void>>();
  private timers = new Set<NodeJS.Timeout>();
  private closed = false;
  /** Every notification sent or dropped, in order. */
  readonly log: PushRecord[] = [];

  constructor(private readonly opts: PushOptions = {}) {}

  /** Queues a fault for the next notification (consumed in order, one each). */
  inject(fault: PushFault, times = 1): void {
    for (let i = 0; i < times; i++) this.faults.push(fault);
  }

  /** Sends `body` to `url` as JSON, applying the next queued fault; does not wait for the answer. */
  notify(url: string, body: unknown): void {
    if (this.closed) return;
    const fault = this.faults.shift() ?? null;
    const record: PushRecord = { url, body, attempts: [], fault: fault?.kind ?? null };
    this.log.push(record);
    if (fault?.kind === 'drop') return;
    const copies = fault?.kind === 'duplicate' ? 2 : 1;
    const delay = fault?.kind === 'delay' ? fault.ms : 0;
    for (let i = 0; i < copies; i++) this.track(this.deliver(url, body, record, delay));
  }

  /** One request-and-answer exchange (a validation handshake); never retried, never faulted. */
  async exchange(url: string, init: { body?: string; contentType?: string; timeoutMs: number }): Promise<{ status: number; body: string } | null> {
    const p = post(url, Buffer.from(init.body ?? ''), init.contentType ?? 'text/plain', init.timeoutMs);
    const tracked = p.then(() => undefined);
    this.track(tracked);
    return p;
  }

  /** Resolves when nothing is being delivered or waiting to be (delayed or redelivered). */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async deliver(url: string, body: unknown, record: PushRecord, delayMs: number): Promise<void> {
    const max = this.opts.maxAttempts ?? 3;
    let wait = delayMs;
    for (let attempt = 0; attempt < max; attempt++) {
      if (wait > 0 && !(await this.sleep(wait))) return;
      if (this.closed) return;
      const r = await post(url, Buffer.from(JSON.stringify(body)), 'application/json', this.opts.timeoutMs ?? 5_000);
      record.attempts.push(r ? r.status : 'error');
      if (r && r.status >= 200 && r.status < 300) return;
      wait = (this.opts.retryDelayMs ?? 50) * 2 ** attempt;
    }
  }

  /** False when the dispatcher closed during the wait. */
  private sleep(ms: number): Promise<boolean> {
    return closableSleep(this.timers, () => this.closed, ms);
  }
}

/** One POST on its own connection (no keep-alive socket left open); null when no answer came. */
function post(url: string, body: Buffer, contentType: string, timeoutMs: number): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': contentType, 'content-length': String(body.length), connection: 'close' },
      timeout: timeoutMs,
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(null));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve(null));
    });
    req.end(body);
  });
}
