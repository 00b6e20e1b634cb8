import { systemClock, type Clock } from '../../../common/clock.ts';
import type { ApiDeps, TokenSource } from '../call.ts';
import { moveMessage } from './message-move.ts';
import { updateMessage } from './message-update.ts';
import { getMimeContent } from './message-value.ts';
import { deltaPage, deltaStartUrl } from './messages-delta.ts';
import { getMessage } from './messages-get.ts';
import { listMessages, listNextPage } from './messages-list.ts';
import { sendMail } from './send-mail.ts';
import { createSubscription, deleteSubscription, renewSubscription } from './subscriptions.ts';

/**
 * The Microsoft Graph mail verbs Cadenza uses, one file each, bound to one mailbox here (the
 * registry). Only the base URL differs between Microsoft and the emulator in src/sim/emulators/graph.
 */
export interface GraphApiConfig {
  /** 'https://graph.microsoft.com/v1.0' unless a test points it at an emulator. */
  baseUrl?: string;
  /** 'me' (the token's owner) or the mailbox's id or user principal name: '/users/{user}'. */
  user?: string;
  tokens: TokenSource;
  clock?: Clock;
  /** Deadline of one HTTP exchange. */
  timeoutMs?: number;
}

export interface GraphContext extends ApiDeps {
  /** '…/v1.0/me/' or '…/v1.0/users/{user}/' with the trailing slash, to resolve verb paths against. */
  mailboxBase: URL;
  /** '…/v1.0/' with the trailing slash: where /subscriptions lives. */
  serviceRoot: URL;
}

export const graphDefaultBaseUrl = 'https://graph.microsoft.com/v1.0';

export function graphContext(cfg: GraphApiConfig): GraphContext {
  const base = new URL(cfg.baseUrl ?? graphDefaultBaseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const who = !cfg.user || cfg.user === 'me' ? 'me' : `users/${encodeURIComponent(cfg.user)}`;
  return {
    mailboxBase: new URL(`${prefix}/${who}/`, base),
    serviceRoot: new URL(`${prefix}/`, base),
    tokens: cfg.tokens,
    clock: cfg.clock ?? systemClock,
    timeoutMs: cfg.timeoutMs ?? 30_000,
  };
}

export function graphApi(cfg: GraphApiConfig) {
  const ctx = graphContext(cfg);
  return {
    sendMail: sendMail.bind(null, ctx),
    list: listMessages.bind(null, ctx),
    listNext: listNextPage.bind(null, ctx),
    get: getMessage.bind(null, ctx),
    move: moveMessage.bind(null, ctx),
    update: updateMessage.bind(null, ctx),
    serviceRoot: ctx.serviceRoot,
    mime: getMimeContent.bind(null, ctx),
    deltaStartUrl: deltaStartUrl.bind(null, ctx),
    delta: deltaPage.bind(null, ctx),
    subscribe: createSubscription.bind(null, ctx),
    renewSubscription: renewSubscription.bind(null, ctx),
    unsubscribe: deleteSubscription.bind(null, ctx),
  };
}

export type GraphApi = ReturnType<typeof graphApi>;

/**
 * True when `link` (an @odata.nextLink or deltaLink from an answer) points under the service root
 * the API was built with. Links are followed with the mailbox's bearer token, so one to another
 * host is never called.
 */
export function isServiceLink(serviceRoot: URL, link: string): boolean {
  try {
    const u = new URL(link);
    return u.origin === serviceRoot.origin && u.pathname.startsWith(serviceRoot.pathname);
  } catch {
    return false;
  }
}
