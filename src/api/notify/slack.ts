import type { Clock } from '../../common/clock.ts';
import { backoffDelay, type BackoffPolicy } from '../../common/backoff.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { DestinationPolicy } from '../webhooks/destination.ts';
import { postWebhook, type PostResult } from '../webhooks/post.ts';
import type { SecretSealer } from '../webhooks/secrets.ts';
import { parseRetryAfter } from '../../mailbox/providers/retry-after.ts';
import type { Store } from '../../store/store.ts';
import { openSlackUrl } from './slack-url.ts';
import { claimPosts, disableSlack, recordPost, type ClaimedPost } from './sql/slack.ts';

/**
 * Posts to members' Slack-compatible incoming webhooks: a JSON body {text, blocks} (Slack's
 * incoming-webhook format; Mattermost and Rocket.Chat read `text`). Each round claims the due
 * posts and sends them concurrently, each with its own deadline, so a slow or failing URL never
 * holds another's; a 2xx is delivered; a 404 or 410 says the webhook is gone (Slack: app removed,
 * channel archived, URL revoked): the post fails and the member's webhook is disabled with a reason
 * they see in Settings (sql/slack.ts disableSlack) until they save a URL again; anything else is
 * tried again after a jittered backoff (30 s doubling to 1 h), or after the receiver's Retry-After
 * when a 429 or 5xx asks for longer (capped at 1 h), until `maxAttempts`, then failed. The URL is
 * opened per attempt and never logged or stored in the outcome.
 */
export interface SlackDeps extends DestinationPolicy {
  store: Store;
  clock: Clock;
  random: Random;
  sealer: SecretSealer;
  log?: Logger;
  appUrl?: string;
  batch?: number;
  timeoutMs?: number;
  maxAttempts?: number;
  backoff?: BackoffPolicy;
}

export const slackBackoff: BackoffPolicy = { baseMs: 30_000, capMs: 3_600_000 };

/** The answers that say the incoming webhook no longer exists. */
const GONE = new Set([404, 410]);

/** What the member reads in Settings > Notifications when their webhook was disabled. */
export function goneReason(status: number, at: number): string {
  return `The Slack webhook answered HTTP ${status} on ${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC: it no longer exists (the app was removed, the channel archived or the URL revoked). Nothing is posted to it; set a new URL to receive notifications on Slack again.`;
}

/** When to try again: the backoff, or the receiver's Retry-After on a 429 or 5xx when it asks for longer (at most the backoff's cap). */
export function retryAt(result: PostResult, attempts: number, at: number, random: Random, policy: BackoffPolicy): number {
  const backoff = backoffDelay(attempts - 1, random, policy);
  const asked = result.kind === 'answered' && (result.status === 429 || result.status >= 500) ? parseRetryAfter(result.retryAfter, at, policy.capMs) : null;
  return at + Math.max(backoff, asked ?? 0);
}

export async function deliverSlack(d: SlackDeps): Promise<{ delivered: number; retried: number; failed: number }> {
  const timeoutMs = d.timeoutMs ?? 10_000;
  const now = d.clock.now();
  const posts = await claimPosts(d.store.db, new Date(now), new Date(now + 2 * timeoutMs + 5_000), d.batch ?? 20);
  const out = { delivered: 0, retried: 0, failed: 0 };
  await Promise.all(
    posts.map(async (p) => {
      const result = await post(d, p, timeoutMs);
      const at = d.clock.now();
      const ok = result.kind === 'answered' && result.status >= 200 && result.status < 300;
      const gone = result.kind === 'answered' && GONE.has(result.status);
      const last = gone || p.attempts >= (d.maxAttempts ?? 8) || p.urlSealed === null;
      const error = ok ? null : result.kind === 'answered' ? `HTTP ${result.status}` : result.error;
      const state = ok ? 'delivered' : last ? 'failed' : 'pending';
      const next = new Date(ok || last ? at : retryAt(result, p.attempts, at, d.random, d.backoff ?? slackBackoff));
      await recordPost(d.store.db, p.id, { state, code: result.kind === 'answered' ? result.status : null, error, next, ...(ok ? { deliveredAt: new Date(at) } : {}) });
      if (gone && p.urlSealed && (await disableSlack(d.store.db, p.workspaceId, p.userId, p.urlSealed, goneReason(result.status, at), new Date(at)))) {
        d.log?.warn({ slackPostId: p.id, workspaceId: p.workspaceId, userId: p.userId, status: result.status }, 'slack webhook gone: disabled until its member sets a new URL');
      }
      out[ok ? 'delivered' : last ? 'failed' : 'retried']++;
      if (!ok) d.log?.warn({ slackPostId: p.id, attempts: p.attempts, error, final: last }, 'slack notification failed');
    }),
  );
  return out;
}

async function post(d: SlackDeps, p: ClaimedPost, timeoutMs: number): Promise<PostResult> {
  if (!p.urlSealed) return { kind: 'error', error: 'no Slack URL set' };
  let url: string;
  try {
    url = await openSlackUrl(d.sealer, p.workspaceId, p.userId, p.urlSealed);
  } catch (e) {
    return { kind: 'error', error: `cannot open the Slack URL: ${(e as Error).message}` };
  }
  const r = await postWebhook(url, JSON.stringify(slackBody(p, d.appUrl)), {}, { allowPrivate: d.allowPrivate, timeoutMs, clock: d.clock });
  // A transport error may quote the URL (a malformed one): keep the secret out of the stored error.
  return r.kind === 'error' ? { kind: 'error', error: r.error.split(url).join('<slack url>') } : r;
}

/** Slack's mrkdwn escapes (&, <, >): an event's text never becomes a link or a mention. */
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function slackBody(p: Pick<ClaimedPost, 'title' | 'body' | 'link'>, appUrl?: string): { text: string; blocks: unknown[] } {
  const open = appUrl ? `${appUrl.replace(/\/$/, '')}${p.link}` : null;
  return {
    text: `${p.title}: ${p.body}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${esc(p.title)}*\n${esc(p.body)}` } },
      ...(open ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: `<${open}|Open in Cadenza>` }] }] : []),
    ],
  };
}
