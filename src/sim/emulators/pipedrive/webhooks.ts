import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { jsonObject, type PipedriveRouteContext } from './context.ts';
import { pipedriveErrors } from './errors.ts';
import { rfc3339, type ChangeListener, type Entity, type PipedriveStore } from './store.ts';
import { activityView, dealView, personView } from './views.ts';

/**
 * Pipedrive's webhooks, version 2.0 (developers' "Webhooks v2" guide):
 *
 *   POST /v1/webhooks  {subscription_url, event_action (create|change|delete|*), event_object
 *                      (person|deal|activity|*), http_auth_user?, http_auth_password?, version: '2.0'}
 *                      → 201 {success: true, data: {id, …}}; route name 'webhooks.create'.
 *
 * A delivery is a POST of {data, previous, meta: {action, entity, entity_id, id, timestamp,
 * company_id, user_id, version: '2.0', webhook_id, change_source}} with HTTP basic auth when the
 * webhook has credentials. `previous` holds only the fields that changed (null on create). A
 * delivery answered other than 2xx is retried (Pipedrive: three times, at growing delays; here
 * `retryDelaysMs`). Webhooks are not rate limited (documented).
 *
 * Faults, consumed one per delivery in order, for the receiver's tests: 'drop' (never sent),
 * 'duplicate' (sent twice), 'reorder' (held back and sent after the next delivery). Real timers,
 * not the emulator's clock: deliveries are network events a test awaits with `idle()`.
 * Which fields entity_id and the ids carry as strings is unverified.
 */
export type WebhookFault = 'drop' | 'duplicate' | 'reorder';

export interface Webhook {
  id: number;
  url: string;
  action: string;
  object: string;
  auth: { user: string; password: string } | null;
}

export interface Delivery {
  webhookId: number;
  body: Record<string, unknown>;
  attempts: Array<number | 'error'>;
  fault: WebhookFault | null;
}

export class WebhookDispatcher {
  readonly hooks: Webhook[] = [];
  readonly deliveries: Delivery[] = [];
  private faults: WebhookFault[] = [];
  private held: Array<() => void> = [];
  private inFlight = new Set<Promise<void>>();
  private timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly store: PipedriveStore,
    private readonly companyId: number,
    private readonly retryDelaysMs: readonly number[] = [20, 40, 80],
  ) {}

  inject(fault: WebhookFault, times = 1): void {
    for (let i = 0; i < times; i++) this.faults.push(fault);
  }

  /** The store's change listener. */
  readonly onChange: ChangeListener = (c) => {
    for (const h of this.hooks) {
      if ((h.action !== '*' && h.action !== c.action) || (h.object !== '*' && h.object !== c.entity)) continue;
      const current = this.view(c.entity, c.current);
      const previous = c.previous ? changedFields(this.view(c.entity, c.previous), current) : null;
      const body = {
        data: c.action === 'delete' ? null : current,
        previous,
        meta: {
          action: c.action,
          entity: c.entity,
          entity_id: String((c.current as { id: number }).id),
          id: randomUUID(),
          timestamp: rfc3339(this.store.now()),
          company_id: this.companyId,
          user_id: c.userId,
          version: '2.0',
          webhook_id: String(h.id),
          change_source: 'api',
          is_bulk_edit: false,
        },
      };
      this.dispatch(h, body);
    }
  };

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

  private view(entity: Entity, record: object): Record<string, unknown> {
    if (entity === 'person') return personView(this.store, record as never);
    if (entity === 'deal') return dealView(record as never);
    return activityView(record as never);
  }

  private dispatch(h: Webhook, body: Record<string, unknown>): void {
    if (this.closed) return;
    const fault = this.faults.shift() ?? null;
    const d: Delivery = { webhookId: h.id, body, attempts: [], fault };
    this.deliveries.push(d);
    if (fault === 'drop') return;
    const send = () => {
      this.track(this.deliver(h, d));
      if (fault === 'duplicate') this.track(this.deliver(h, d));
    };
    if (fault === 'reorder') {
      this.held.push(send);
      return;
    }
    send();
    // Whatever was held back goes after this one.
    for (const later of this.held.splice(0)) later();
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async deliver(h: Webhook, d: Delivery): Promise<void> {
    for (let attempt = 0; attempt <= this.retryDelaysMs.length; attempt++) {
      if (attempt > 0 && !(await this.sleep(this.retryDelaysMs[attempt - 1]!))) return;
      const status = await post(h, JSON.stringify(d.body));
      d.attempts.push(status ?? 'error');
      if (status !== null && status >= 200 && status < 300) return;
    }
  }

  private sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.closed) return resolve(false);
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve(!this.closed);
      }, ms);
      this.timers.add(t);
    });
  }
}

export function registerWebhookRoutes(app: FastifyInstance, ctx: PipedriveRouteContext, dispatcher: WebhookDispatcher): void {
  app.post('/v1/webhooks', (req, reply) =>
    ctx.run('webhooks.create', req, reply, { api: 'v1', kind: 'mutate' }, () => {
      const b = jsonObject(req);
      if (!b) return pipedriveErrors.badRequestV1('The body must be a JSON object');
      for (const k of Object.keys(b)) if (!['subscription_url', 'event_action', 'event_object', 'http_auth_user', 'http_auth_password', 'version', 'name'].includes(k)) return pipedriveErrors.badRequestV1(`Unknown parameter '${k}'`);
      if (typeof b.subscription_url !== 'string' || !/^https?:\/\//.test(b.subscription_url)) return pipedriveErrors.badRequestV1('subscription_url must be an http(s) URL');
      if (!['create', 'change', 'delete', '*'].includes(b.event_action as string)) return pipedriveErrors.badRequestV1('Invalid event_action');
      if (!['person', 'deal', 'activity', '*'].includes(b.event_object as string)) return pipedriveErrors.notImplemented(`webhooks on ${String(b.event_object)}`);
      if (b.version !== undefined && b.version !== '2.0') return pipedriveErrors.notImplemented(`webhooks version ${String(b.version)}`);
      const auth = typeof b.http_auth_user === 'string' && typeof b.http_auth_password === 'string' ? { user: b.http_auth_user, password: b.http_auth_password } : null;
      const hook: Webhook = { id: ctx.store.id('webhook'), url: b.subscription_url, action: b.event_action as string, object: b.event_object as string, auth };
      dispatcher.hooks.push(hook);
      return {
        status: 201,
        body: { status: 'ok', success: true, data: { id: hook.id, subscription_url: hook.url, event_action: hook.action, event_object: hook.object, version: '2.0', is_active: 1, http_auth_user: auth?.user ?? null } },
      };
    }),
  );
}

function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(before)) if (k !== 'update_time' && JSON.stringify(v) !== JSON.stringify(after[k])) out[k] = v;
  return out;
}

/** One POST on its own connection; the status, or null when no answer came. */
function post(h: Webhook, body: string): Promise<number | null> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
    if (h.auth) headers.authorization = `Basic ${Buffer.from(`${h.auth.user}:${h.auth.password}`).toString('base64')}`;
    const req = http.request(h.url, { method: 'POST', agent: false, headers, timeout: 5000 });
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
