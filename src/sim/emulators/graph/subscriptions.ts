import type { EmulatorReply } from '../server.ts';
import type { PushDispatcher } from '../push.ts';
import { graphError, graphErrors } from './errors.ts';
import { resolveFolder, type FolderName, type GraphChange, type GraphMailbox } from './mailbox.ts';

/**
 * Change-notification subscriptions on messages (concepts/change-notifications-delivery-webhooks.md,
 * resources/subscription.md): created only after the notification URL passes the validation
 * handshake (POST `?validationToken=…`, answered 200 with the decoded token within
 * `validationTimeoutMs`, 10 s documented), with an expiration no further than `maxLifetimeMs`
 * (4,230 minutes in the stored table; configurable, the sources disagree), renewed by PATCH.
 * Each created (or moved-in) message in a subscribed folder POSTs `{value:[{subscriptionId,
 * subscriptionExpirationDateTime, changeType, resource, resourceData, clientState, tenantId}]}`
 * through the push dispatcher (faults: drop, duplicate, delay; redelivery while not 2xx).
 * Lifecycle notifications (missed, subscriptionRemoved, reauthorizationRequired) go to the
 * lifecycleNotificationUrl when a test calls `lifecycle()`.
 *
 * The real service requires an https notificationUrl; the emulator takes http on loopback.
 */
export interface Subscription {
  id: string;
  mb: GraphMailbox;
  resource: string;
  /** null: every message of the mailbox (`/me/messages`). */
  folder: FolderName | null;
  changeTypes: Set<string>;
  notificationUrl: string;
  lifecycleNotificationUrl: string | null;
  clientState: string | null;
  expiration: number;
}

export const tenantId = '00000000-0000-4000-a000-00000000c0de';

export class GraphSubscriptions {
  readonly all = new Map<string, Subscription>();
  private seq = 0;

  constructor(
    private readonly push: PushDispatcher,
    private readonly clock: { now(): number },
    private readonly limits: { maxLifetimeMs: number; validationTimeoutMs: number },
  ) {}

  attach(mb: GraphMailbox): void {
    mb.listeners.push((c) => this.onChange(mb, c));
  }

  async create(mb: GraphMailbox, body: unknown, serviceRoot: string): Promise<EmulatorReply> {
    const b = body as Record<string, unknown> | undefined;
    if (!b || typeof b !== 'object' || Buffer.isBuffer(b)) return graphErrors.badRequest('Invalid subscription request body.');
    const { changeType, notificationUrl, resource, expirationDateTime, clientState, lifecycleNotificationUrl } = b;
    if (typeof changeType !== 'string' || changeType.split(',').some((t) => !['created', 'updated', 'deleted'].includes(t.trim()))) {
      return graphErrors.badRequest(`Invalid changeType: ${String(changeType)}`);
    }
    if (typeof notificationUrl !== 'string' || !/^https?:\/\//.test(notificationUrl)) return graphErrors.badRequest('Invalid notificationUrl.');
    if (lifecycleNotificationUrl !== undefined && (typeof lifecycleNotificationUrl !== 'string' || !/^https?:\/\//.test(lifecycleNotificationUrl))) {
      return graphErrors.badRequest('Invalid lifecycleNotificationUrl.');
    }
    if (typeof resource !== 'string') return graphErrors.badRequest('Invalid resource.');
    const target = parseResource(resource, mb.address);
    if (target === undefined) return graphErrors.badRequest(`emulator: resource not supported for subscriptions: ${resource}`);
    if (clientState !== undefined && (typeof clientState !== 'string' || clientState.length > 128)) {
      return graphErrors.badRequest('clientState must be a string of at most 128 characters.');
    }
    const expiration = this.checkExpiration(expirationDateTime);
    if (typeof expiration !== 'number') return expiration;
    for (const url of [notificationUrl, ...(typeof lifecycleNotificationUrl === 'string' ? [lifecycleNotificationUrl] : [])]) {
      if (!(await this.validate(url))) {
        return graphError(
          400,
          'ValidationError',
          'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.',
        );
      }
    }
    const sub: Subscription = {
      id: `7f105c7d-2dc5-4530-97cd-${(++this.seq).toString(16).padStart(12, '0')}`,
      mb,
      resource,
      folder: target,
      changeTypes: new Set(changeType.split(',').map((t) => t.trim())),
      notificationUrl,
      lifecycleNotificationUrl: typeof lifecycleNotificationUrl === 'string' ? lifecycleNotificationUrl : null,
      clientState: typeof clientState === 'string' ? clientState : null,
      expiration,
    };
    this.all.set(sub.id, sub);
    return { status: 201, body: { '@odata.context': `${serviceRoot}/$metadata#subscriptions/$entity`, ...render(sub) } };
  }

  update(mb: GraphMailbox, id: string, body: unknown, serviceRoot: string): EmulatorReply {
    const sub = this.live(mb, id);
    if (!sub) return notFound();
    const expiration = this.checkExpiration((body as { expirationDateTime?: unknown } | undefined)?.expirationDateTime);
    if (typeof expiration !== 'number') return expiration;
    sub.expiration = expiration;
    return { status: 200, body: { '@odata.context': `${serviceRoot}/$metadata#subscriptions/$entity`, ...render(sub) } };
  }

  remove(mb: GraphMailbox, id: string): EmulatorReply {
    if (!this.live(mb, id)) return notFound();
    this.all.delete(id);
    return { status: 204 };
  }

  /** Test hook: sends a lifecycle notification; `subscriptionRemoved` also deletes the subscription. */
  lifecycle(id: string, event: 'missed' | 'subscriptionRemoved' | 'reauthorizationRequired'): void {
    const sub = this.all.get(id);
    if (!sub) throw new Error(`graph emulator: no subscription ${id}`);
    if (event === 'subscriptionRemoved') this.all.delete(id);
    if (!sub.lifecycleNotificationUrl) return;
    this.push.notify(sub.lifecycleNotificationUrl, {
      value: [
        {
          subscriptionId: sub.id,
          subscriptionExpirationDateTime: iso(sub.expiration),
          tenantId,
          clientState: sub.clientState,
          lifecycleEvent: event,
        },
      ],
    });
  }

  private live(mb: GraphMailbox, id: string): Subscription | undefined {
    const sub = this.all.get(id);
    if (!sub || sub.mb !== mb) return undefined;
    if (sub.expiration <= this.clock.now()) {
      this.all.delete(id);
      return undefined;
    }
    return sub;
  }

  private checkExpiration(v: unknown): number | EmulatorReply {
    const at = typeof v === 'string' ? Date.parse(v) : NaN;
    if (!Number.isFinite(at)) return graphErrors.badRequest('expirationDateTime is required and must be a DateTimeOffset.');
    const now = this.clock.now();
    if (at <= now) return graphErrors.badRequest('Subscription expiration must be in the future.');
    if (at - now > this.limits.maxLifetimeMs) {
      // Graph's text names the resource's limit in minutes (the code is unverified).
      return graphErrors.badRequest(`Subscription expiration can only be ${Math.round(this.limits.maxLifetimeMs / 60_000)} minutes in the future.`);
    }
    return at;
  }

  private async validate(url: string): Promise<boolean> {
    const token = `Validation: Testing client application at ${new Date(this.clock.now()).toISOString()} & more`;
    const sep = url.includes('?') ? '&' : '?';
    const r = await this.push.exchange(`${url}${sep}validationToken=${encodeURIComponent(token)}`, { timeoutMs: this.limits.validationTimeoutMs });
    return r !== null && r.status === 200 && r.body === token;
  }

  private onChange(mb: GraphMailbox, c: GraphChange): void {
    const now = this.clock.now();
    for (const sub of [...this.all.values()]) {
      if (sub.mb !== mb) continue;
      if (sub.expiration <= now) {
        this.all.delete(sub.id);
        continue;
      }
      const events: Array<'created' | 'deleted' | 'updated'> = [];
      if (sub.folder === null) events.push(c.type === 'created' ? 'created' : 'updated');
      else if (c.folder === sub.folder) events.push(c.type === 'updated' ? 'updated' : 'created');
      else if (c.fromFolder === sub.folder) events.push('deleted');
      for (const e of events) {
        if (!sub.changeTypes.has(e)) continue;
        const m = mb.byImmutableId(c.immutableId);
        const resource = `Users/${mb.address}/Messages/${c.immutableId}`;
        this.push.notify(sub.notificationUrl, {
          value: [
            {
              subscriptionId: sub.id,
              subscriptionExpirationDateTime: iso(sub.expiration),
              changeType: e,
              resource,
              resourceData: {
                '@odata.type': '#Microsoft.Graph.Message',
                '@odata.id': resource,
                '@odata.etag': `W/"CQAAABYAAAA${m?.seq ?? 0}"`,
                id: c.immutableId,
              },
              clientState: sub.clientState,
              tenantId,
            },
          ],
        });
      }
    }
  }
}

/** `/me/mailFolders('inbox')/messages`, `me/mailfolders/inbox/messages`, `/users/{id}/messages`…; undefined: not supported. */
function parseResource(resource: string, address: string): FolderName | null | undefined {
  const m = /^\/?(me|users\/([^/]+))\/(?:mailfolders(?:\('([^']+)'\)|\/([^/]+))\/)?messages$/i.exec(resource.trim());
  if (!m) return undefined;
  if (m[2] !== undefined && decodeURIComponent(m[2]).toLowerCase() !== address) return undefined;
  const folder = m[3] ?? m[4];
  if (folder === undefined) return null;
  return resolveFolder(folder) ?? undefined;
}

function render(sub: Subscription): Record<string, unknown> {
  return {
    id: sub.id,
    resource: sub.resource,
    applicationId: '24d3b144-21ae-4080-943f-7067b395b913',
    changeType: [...sub.changeTypes].join(','),
    clientState: sub.clientState,
    notificationUrl: sub.notificationUrl,
    lifecycleNotificationUrl: sub.lifecycleNotificationUrl,
    expirationDateTime: iso(sub.expiration),
    creatorId: '8ee44408-0679-472c-bc2a-692812af3437',
    latestSupportedTlsVersion: 'v1_2',
    notificationContentType: null,
  };
}

function notFound(): EmulatorReply {
  return graphError(404, 'ResourceNotFound', 'The object was not found.');
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
