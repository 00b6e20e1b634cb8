import { callApi, type ApiResult } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GraphContext } from './api.ts';
import { graphRetryAfter, parseGraphError } from './errors.ts';

/**
 * Change-notification subscriptions (api-reference/v1.0/api/subscription-post-subscriptions.md,
 * subscription-update.md, subscription-delete.md): create, renew (PATCH expirationDateTime),
 * delete. The three verbs of one small resource, kept together. Graph validates the notification
 * URL (the handshake) before it answers the create.
 */
export interface SubscriptionInput {
  changeType: string;
  notificationUrl: string;
  lifecycleNotificationUrl?: string;
  resource: string;
  expirationDateTime: number;
  clientState: string;
}

export interface GraphSubscription {
  id: string;
  expiration: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function readSubscription(b: Buffer): { ok: true; value: GraphSubscription } | { ok: false; reason: string } {
  const j = jsonBody(b) as { id?: unknown; expirationDateTime?: unknown } | undefined;
  const exp = typeof j?.expirationDateTime === 'string' ? Date.parse(j.expirationDateTime) : NaN;
  if (!j || typeof j.id !== 'string' || !Number.isFinite(exp)) return { ok: false, reason: 'subscription answer without id/expirationDateTime' };
  return { ok: true, value: { id: j.id, expiration: exp } };
}

export function createSubscription(ctx: GraphContext, input: SubscriptionInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<GraphSubscription>> {
  return callApi(ctx, {
    method: 'POST',
    url: new URL('subscriptions', ctx.serviceRoot),
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ ...input, expirationDateTime: iso(input.expirationDateTime) })),
    signal: opts.signal,
    parseOk: (_s, _h, b) => readSubscription(b),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

export function renewSubscription(ctx: GraphContext, input: { id: string; expirationDateTime: number }, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<GraphSubscription>> {
  return callApi(ctx, {
    method: 'PATCH',
    url: new URL(`subscriptions/${encodeURIComponent(input.id)}`, ctx.serviceRoot),
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ expirationDateTime: iso(input.expirationDateTime) })),
    signal: opts.signal,
    parseOk: (_s, _h, b) => readSubscription(b),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

export function deleteSubscription(ctx: GraphContext, input: { id: string }, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<null>> {
  return callApi(ctx, {
    method: 'DELETE',
    url: new URL(`subscriptions/${encodeURIComponent(input.id)}`, ctx.serviceRoot),
    signal: opts.signal,
    parseOk: () => ({ ok: true, value: null }),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}
