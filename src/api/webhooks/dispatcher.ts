import { sql } from 'kysely';
import type { Clock, TimerHandle } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import { backoffDelay, type BackoffPolicy } from '../../common/backoff.ts';
import type { Store } from '../../store/store.ts';
import type { DestinationPolicy } from './destination.ts';
import { postWebhook, type PostResult } from './post.ts';
import { signingSecrets, type SecretSealer } from './secrets.ts';
import { signAll, signatureHeader } from './signature.ts';

export interface WebhookDispatcherOptions extends DestinationPolicy {
  store: Store;
  clock: Clock;
  random: Random;
  /** Opens the sealed signing secrets (the vault): the only place they are decrypted. */
  secrets: SecretSealer;
  log?: Logger;
  /** How often due deliveries are looked for (default 1 s); nudge() looks at once. */
  pollMs?: number;
  /** Deliveries claimed per round (default 20), posted concurrently. */
  batch?: number;
  /** Attempts before a delivery is given up as failed (default 10: about 1 day with the default backoff). */
  maxAttempts?: number;
  /** Delay ceilings between attempts, full jitter (default 30 s doubling to 4 h). */
  backoff?: BackoffPolicy;
  /** Deadline of one POST (default 10 s). */
  timeoutMs?: number;
  /** Delivered and failed deliveries are kept this long in the log (default 30 days), then deleted. */
  retainMs?: number;
}

export const defaultWebhookBackoff: BackoffPolicy = { baseMs: 30_000, capMs: 4 * 3_600_000 };

interface Claimed {
  id: number;
  workspace_id: string;
  event_id: string;
  event_type: string;
  payload: unknown;
  attempts: number;
  created_at: Date;
  endpoint_id: string;
  url: string;
  secret_sealed: Buffer | null;
  previous_secret_sealed: Buffer | null;
  previous_secret_expires_at: Date | null;
  disabled_at: Date | null;
}

/**
 * Delivers the webhook outbox (0009_webhooks.sql). Each round claims due deliveries with `for
 * update skip locked`, so several API processes share the work without sending one twice at once;
 * the claim pushes next_attempt_at past the POST's deadline, so a process that dies mid-POST leaves
 * the delivery to be retried by another once the claim lapses (at least once: receivers dedupe by
 * the event id). Then each is POSTed, signed, and the outcome recorded: 2xx delivered; anything
 * else (status, timeout, refused destination) retried after a jittered exponential backoff, until
 * maxAttempts, then failed. The log is the delivery row itself: state, attempts, last error, last
 * response code.
 */
export class WebhookDispatcher {
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private again = false;
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: WebhookDispatcherOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Look for due deliveries now (a test event was queued). */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    await this.running;
  }

  /** One round: claims and delivers what is due; returns how many were attempted. */
  async runOnce(): Promise<number> {
    const now = this.o.clock.now();
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    const claimed = await sql<Claimed>`
      update webhook_delivery d
      set attempts = d.attempts + 1, last_attempt_at = ${new Date(now)}, next_attempt_at = ${new Date(now + 2 * timeoutMs + 5_000)}
      from (select id from webhook_delivery
            where state = 'pending' and next_attempt_at <= ${new Date(now)}
            order by next_attempt_at limit ${this.o.batch ?? 20}
            for update skip locked) c, webhook_endpoint e
      where d.id = c.id and e.id = d.endpoint_id
      returning d.id, d.workspace_id, d.event_id, d.event_type, d.payload, d.attempts, d.created_at, d.endpoint_id, e.url,
                e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at, e.disabled_at`.execute(this.o.store.db);
    await Promise.all(claimed.rows.map((d) => this.deliver(d, timeoutMs)));
    return claimed.rows.length;
  }

  private async deliver(d: Claimed, timeoutMs: number): Promise<void> {
    const result: PostResult = d.disabled_at ? { kind: 'error', error: 'endpoint disabled' } : await this.post(d, timeoutMs);
    const now = this.o.clock.now();
    const ok = result.kind === 'answered' && result.status >= 200 && result.status < 300;
    const code = result.kind === 'answered' ? result.status : null;
    const error = ok ? null : result.kind === 'answered' ? `HTTP ${result.status}` : result.error;
    const last = d.attempts >= (this.o.maxAttempts ?? 10) || d.disabled_at !== null;
    const state = ok ? 'delivered' : last ? 'failed' : 'pending';
    const next = ok || last ? now : now + backoffDelay(d.attempts - 1, this.o.random, this.o.backoff ?? defaultWebhookBackoff);
    await this.o.store.db
      .updateTable('webhook_delivery')
      .set({ state, response_code: code, last_error: error, next_attempt_at: new Date(next), ...(ok ? { delivered_at: new Date(now) } : {}) })
      .where('id', '=', d.id)
      .execute();
    if (!ok) this.o.log?.warn({ deliveryId: d.id, eventType: d.event_type, attempts: d.attempts, error, final: last }, 'webhook delivery failed');
  }

  private async post(d: Claimed, timeoutMs: number): Promise<PostResult> {
    const now = this.o.clock.now();
    let secrets: string[];
    try {
      // Opened per attempt and dropped with it: the plaintext never outlives the signing.
      secrets = await signingSecrets(this.o.secrets, { endpointId: d.endpoint_id, workspaceId: d.workspace_id, secretSealed: d.secret_sealed, previousSealed: d.previous_secret_sealed, previousExpiresAt: d.previous_secret_expires_at }, now);
    } catch (e) {
      return { kind: 'error', error: `cannot sign: ${(e as Error).message}` };
    }
    return postWebhook(d.url, webhookBody(d), deliveryHeaders(d, secrets, now), { allowPrivate: this.o.allowPrivate, timeoutMs, clock: this.o.clock });
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer?.cancel();
    this.timer = this.o.clock.setTimer(ms, () => {
      this.timer = null;
      this.running = this.loop().finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.schedule(0);
        } else {
          this.schedule(this.o.pollMs ?? 1_000);
        }
      });
    });
  }

  /** Drops finished deliveries past the retention, at most hourly; returns how many. */
  async prune(): Promise<number> {
    const now = this.o.clock.now();
    this.prunedAt = now;
    const r = await this.o.store.db
      .deleteFrom('webhook_delivery')
      .where('state', '<>', 'pending')
      .where('next_attempt_at', '<', new Date(now - (this.o.retainMs ?? 30 * 86_400_000)))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  private async loop(): Promise<void> {
    try {
      if (this.o.clock.now() - this.prunedAt >= 3_600_000) await this.prune();
      // A full batch means more may be due: keep going until a round comes back short.
      while (!this.stopped && (await this.runOnce()) >= (this.o.batch ?? 20));
    } catch (e) {
      this.o.log?.error({ err: e }, 'webhook dispatcher round failed');
    }
  }
}

/** The JSON body: the same bytes on every attempt (only the signature's timestamp changes). */
export function webhookBody(d: Pick<Claimed, 'event_id' | 'event_type' | 'workspace_id' | 'created_at' | 'payload'>): string {
  return JSON.stringify({ id: d.event_id, type: d.event_type, workspaceId: d.workspace_id, createdAt: d.created_at.toISOString(), data: d.payload });
}

function deliveryHeaders(d: Claimed, secrets: string[], nowMs: number): Record<string, string> {
  const body = webhookBody(d);
  return {
    [signatureHeader]: signAll(secrets, body, Math.floor(nowMs / 1000)),
    'cadenza-event': d.event_type,
    'cadenza-event-id': d.event_id,
    'cadenza-delivery': String(d.id),
    'cadenza-attempt': String(d.attempts),
  };
}
