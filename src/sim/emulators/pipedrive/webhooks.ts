import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { WebhookDelivery, type Delivery, type WebhookFault } from '../webhook-delivery.ts';
import { jsonObject, type PipedriveRouteContext } from './context.ts';
import { pipedriveErrors, v1Error } from './errors.ts';
import { rfc3339, type ChangeListener, type Entity, type PipedriveStore } from './store.ts';
import { activityView, dealView, personView } from './views.ts';

export type { Delivery, WebhookFault };

/**
 * Pipedrive's webhooks, version 2.0 (developers' "Webhooks v2" guide):
 *
 *   POST   /v1/webhooks  {subscription_url, event_action (create|change|delete|*), event_object
 *                        (person|deal|activity|*), http_auth_user?, http_auth_password?, version: '2.0'}
 *                        → 201 {success: true, data: {id, …}}; route name 'webhooks.create'.
 *   DELETE /v1/webhooks/:id → 200 {success: true}; 404 for an id not known ('webhooks.delete').
 *
 * A delivery is a POST of {data, previous, meta: {action, entity, entity_id, id, timestamp,
 * company_id, user_id, version: '2.0', webhook_id, change_source}} with HTTP basic auth when the
 * webhook has credentials. `previous` holds only the fields that changed (null on create). A
 * delivery answered other than 2xx is retried (Pipedrive: three times, at growing delays; here
 * `retryDelaysMs`); faults and retries are webhook-delivery.ts's. Webhooks are not rate limited
 * (documented). Which fields entity_id and the ids carry as strings is unverified.
 */
export interface Webhook {
  id: number;
  url: string;
  action: string;
  object: string;
  auth: { user: string; password: string } | null;
}

export class WebhookDispatcher {
  hooks: Webhook[] = [];
  private readonly delivery: WebhookDelivery;

  constructor(
    private readonly store: PipedriveStore,
    private readonly companyId: number,
    retryDelaysMs?: readonly number[],
  ) {
    this.delivery = new WebhookDelivery(retryDelaysMs ? { retryDelaysMs } : {});
  }

  get deliveries(): Delivery[] {
    return this.delivery.deliveries;
  }

  inject(fault: WebhookFault, times = 1): void {
    this.delivery.inject(fault, times);
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
      const auth: Record<string, string> = h.auth ? { authorization: `Basic ${Buffer.from(`${h.auth.user}:${h.auth.password}`).toString('base64')}` } : {};
      this.delivery.send(h.id, h.url, body, () => auth);
    }
  };

  idle(): Promise<void> {
    return this.delivery.idle();
  }

  close(): Promise<void> {
    return this.delivery.close();
  }

  private view(entity: Entity, record: object): Record<string, unknown> {
    if (entity === 'person') return personView(this.store, record as never);
    if (entity === 'deal') return dealView(record as never);
    return activityView(record as never);
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
  app.delete<{ Params: { id: string } }>('/v1/webhooks/:id', (req, reply) =>
    ctx.run('webhooks.delete', req, reply, { api: 'v1', kind: 'mutate' }, () => {
      const id = Number(req.params.id);
      if (!dispatcher.hooks.some((h) => h.id === id)) return v1Error(404, 'Webhook not found');
      dispatcher.hooks = dispatcher.hooks.filter((h) => h.id !== id);
      return { status: 200, body: { status: 'ok', success: true } };
    }),
  );
}

function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(before)) if (k !== 'update_time' && JSON.stringify(v) !== JSON.stringify(after[k])) out[k] = v;
  return out;
}
