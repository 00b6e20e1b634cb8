import { systemClock, type Clock } from '../../../common/clock.ts';
import type { ApiDeps, TokenSource } from '../call.ts';
import { listHistory } from './history-list.ts';
import { getMessage } from './messages-get.ts';
import { listMessages } from './messages-list.ts';
import { modifyMessage } from './messages-modify.ts';
import { sendMessage } from './messages-send.ts';
import { getProfile } from './profile.ts';
import { stopWatch } from './stop.ts';
import { watchMailbox } from './watch.ts';

/**
 * The Gmail API verbs Cadenza uses, one file each, bound to one mailbox here (the registry).
 * Only the base URL differs between Google and the emulator in src/sim/emulators/gmail.
 */
export interface GmailApiConfig {
  /** 'https://gmail.googleapis.com' unless a test points it at an emulator. */
  baseUrl?: string;
  /** 'me' (the token's owner) or the mailbox's address. */
  userId?: string;
  tokens: TokenSource;
  clock?: Clock;
  /** Deadline of one HTTP exchange; Gmail answers a send in about a second. */
  timeoutMs?: number;
}

export interface GmailContext extends ApiDeps {
  /** '…/gmail/v1/users/{userId}/' with the trailing slash, to resolve verb paths against. */
  userBase: URL;
}

export const gmailDefaultBaseUrl = 'https://gmail.googleapis.com';

export function gmailContext(cfg: GmailApiConfig): GmailContext {
  const base = new URL(cfg.baseUrl ?? gmailDefaultBaseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const userBase = new URL(`${prefix}/gmail/v1/users/${encodeURIComponent(cfg.userId ?? 'me')}/`, base);
  return { userBase, tokens: cfg.tokens, clock: cfg.clock ?? systemClock, timeoutMs: cfg.timeoutMs ?? 30_000 };
}

export function gmailApi(cfg: GmailApiConfig) {
  const ctx = gmailContext(cfg);
  return {
    send: sendMessage.bind(null, ctx),
    list: listMessages.bind(null, ctx),
    get: getMessage.bind(null, ctx),
    modify: modifyMessage.bind(null, ctx),
    profile: getProfile.bind(null, ctx),
    history: listHistory.bind(null, ctx),
    watch: watchMailbox.bind(null, ctx),
    stop: stopWatch.bind(null, ctx),
  };
}

export type GmailApi = ReturnType<typeof gmailApi>;
