import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { Db } from '../../store/store.ts';
import { checkEndpointUrl, type DestinationPolicy } from './destination.ts';
import { webhookEvents, type DeliveryView, type EndpointView, type WebhookEvent } from './views.ts';
import { newSigningSecret, secretContext, type SecretSealer } from './secrets.ts';

export { webhookEvents, type DeliveryView, type EndpointView, type WebhookEvent } from './views.ts';

/** Per workspace: a handful is plenty, and each one multiplies every fact's writes. */
export const maxEndpointsPerWorkspace = 20;

interface Deps {
  db: Db;
  clock: Clock;
  random: Random;
}

const endpointColumns = ['id', 'url', 'events', 'description', 'created_at'] as const;
const toEndpoint = (r: { id: string; url: string; events: string[]; description: string | null; created_at: Date }): EndpointView => ({
  id: r.id,
  url: r.url,
  events: r.events,
  description: r.description,
  createdAt: r.created_at.toISOString(),
});

/** A new endpoint and its signing secret, which is returned here only (stored sealed). */
export async function createEndpoint(
  d: Deps & { sealer: SecretSealer },
  policy: DestinationPolicy,
  input: { workspaceId: string; url: string; events: WebhookEvent[]; description?: string | undefined },
): Promise<EndpointView & { secret: string }> {
  const url = checkEndpointUrl(input.url, policy);
  const events = [...new Set(input.events)];
  if (events.length === 0) throw cadenzaError('INVALID_INPUT', `subscribe to at least one event (${webhookEvents.join(', ')})`);
  const count = await d.db.selectFrom('webhook_endpoint').select((e) => e.fn.countAll<number>().as('n')).where('workspace_id', '=', input.workspaceId).executeTakeFirstOrThrow();
  if (Number(count.n) >= maxEndpointsPerWorkspace) throw cadenzaError('CONFLICT', `a workspace has at most ${maxEndpointsPerWorkspace} webhook endpoints`);
  const secret = newSigningSecret();
  const id = newId(d.clock.now(), d.random);
  const row = await d.db
    .insertInto('webhook_endpoint')
    .values({ id, workspace_id: input.workspaceId, url: url.href, events, secret_sealed: await d.sealer.seal(input.workspaceId, secretContext(id), secret), description: input.description ?? null })
    .returning(endpointColumns)
    .executeTakeFirstOrThrow();
  return { ...toEndpoint(row), secret };
}

/** How long the secret a rotation replaces still signs deliveries, by default (and at most). */
export const defaultPreviousSecretMs = 24 * 3_600_000;
export const maxPreviousSecretMs = 7 * 24 * 3_600_000;

/**
 * A new signing secret for the endpoint, returned here only. The one it replaces keeps signing
 * (a second v1 in Cadenza-Signature) for keepPreviousMs, so receivers can switch without losing
 * deliveries; 0 drops it at once (a leaked secret). A previous secret still in its overlap is
 * dropped: only the newest two ever sign.
 */
export async function rotateSecret(d: Deps & { sealer: SecretSealer }, workspaceId: string, endpointId: string, keepPreviousMs: number): Promise<EndpointView & { secret: string; previousSecretExpiresAt: string | null }> {
  await mustExist(d.db, workspaceId, endpointId);
  const now = d.clock.now();
  const secret = newSigningSecret();
  const sealed = await d.sealer.seal(workspaceId, secretContext(endpointId), secret);
  const expires = keepPreviousMs > 0 ? new Date(now + Math.min(keepPreviousMs, maxPreviousSecretMs)) : null;
  const row = await d.db
    .updateTable('webhook_endpoint')
    .set((eb) => ({
      secret_sealed: sealed,
      previous_secret_sealed: expires ? eb.ref('secret_sealed') : null,
      previous_secret_expires_at: expires,
      secret_rotated_at: new Date(now),
      // A secret still in clear (not yet sealed by sealLegacyWebhookSecrets) is replaced, not kept.
      legacy_secret: null,
    }))
    .where('id', '=', endpointId)
    .where('workspace_id', '=', workspaceId)
    .returning(endpointColumns)
    .executeTakeFirst();
  if (!row) throw cadenzaError('NOT_FOUND', 'no webhook endpoint with this id in this workspace');
  return { ...toEndpoint(row), secret, previousSecretExpiresAt: expires?.toISOString() ?? null };
}

export async function listEndpoints(db: Db, workspaceId: string): Promise<EndpointView[]> {
  const rows = await db.selectFrom('webhook_endpoint').select(endpointColumns).where('workspace_id', '=', workspaceId).where('disabled_at', 'is', null).orderBy('created_at').execute();
  return rows.map(toEndpoint);
}

/** Deletes the endpoint with its deliveries (pending ones are not sent). */
export async function deleteEndpoint(db: Db, workspaceId: string, endpointId: string): Promise<EndpointView> {
  const row = await db.deleteFrom('webhook_endpoint').where('id', '=', endpointId).where('workspace_id', '=', workspaceId).returning(endpointColumns).executeTakeFirst();
  if (!row) throw cadenzaError('NOT_FOUND', 'no webhook endpoint with this id in this workspace');
  return toEndpoint(row);
}

/** The endpoint's deliveries, newest first; `before` pages back by delivery id. */
export async function listDeliveries(db: Db, workspaceId: string, endpointId: string, o: { limit: number; before?: number | undefined; state?: DeliveryView['state'] | undefined }): Promise<DeliveryView[]> {
  await mustExist(db, workspaceId, endpointId);
  let q = db
    .selectFrom('webhook_delivery')
    .select(['id', 'event_id', 'event_type', 'state', 'attempts', 'response_code', 'last_error', 'created_at', 'last_attempt_at', 'next_attempt_at', 'delivered_at'])
    .where('endpoint_id', '=', endpointId)
    .orderBy('id', 'desc')
    .limit(o.limit);
  if (o.before !== undefined) q = q.where('id', '<', o.before);
  if (o.state) q = q.where('state', '=', o.state);
  return (await q.execute()).map((r) => ({
    id: r.id,
    eventId: r.event_id,
    eventType: r.event_type,
    state: r.state,
    attempts: r.attempts,
    responseCode: r.response_code,
    lastError: r.last_error,
    createdAt: r.created_at.toISOString(),
    lastAttemptAt: r.last_attempt_at?.toISOString() ?? null,
    nextAttemptAt: r.state === 'pending' ? r.next_attempt_at.toISOString() : null,
    deliveredAt: r.delivered_at?.toISOString() ?? null,
  }));
}

/** Queues a `test` event for one endpoint (whatever it subscribes to); the dispatcher sends it. */
export async function queueTestEvent(d: Deps, workspaceId: string, endpointId: string): Promise<{ deliveryId: number; eventId: string }> {
  await mustExist(d.db, workspaceId, endpointId);
  const now = d.clock.now();
  const eventId = `test:${newId(now, d.random)}`;
  const row = await d.db
    .insertInto('webhook_delivery')
    .values({ endpoint_id: endpointId, workspace_id: workspaceId, event_id: eventId, event_type: 'test', payload: JSON.stringify({ at: new Date(now).toISOString(), message: 'A test event from Cadenza.' }), next_attempt_at: new Date(now) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { deliveryId: row.id, eventId };
}

async function mustExist(db: Db, workspaceId: string, endpointId: string): Promise<void> {
  const e = await db.selectFrom('webhook_endpoint').select('id').where('id', '=', endpointId).where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!e) throw cadenzaError('NOT_FOUND', 'no webhook endpoint with this id in this workspace');
}
