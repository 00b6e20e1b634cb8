import { ImapFlow, type ImapFlowOptions } from 'imapflow';
import { cadenzaError, isCadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import { imapFlowOptions, type ImapAccount } from './account.ts';
import { imapError } from './errors.ts';
import { pinnedHost } from '../mail-hosts.ts';

/**
 * Opens an authenticated IMAP connection. With XOAUTH2 a refused token is refreshed once
 * (forceRefresh) and tried again: an access token can expire between the vault's check and the
 * login. Throws MAILBOX_AUTH_FAILED or MAILBOX_UNAVAILABLE; never leaves a socket open on failure.
 */
export interface ConnectOptions {
  logger?: Logger;
  /** imapflow options over the account's (imapFlowOptions' `extra`). */
  flow?: Partial<ImapFlowOptions>;
}

export async function connectImap(account: ImapAccount, opts: ConnectOptions = {}): Promise<ImapFlow> {
  if (account.auth.kind === 'password') return open(account, undefined, opts);
  let token: string;
  try {
    token = await account.auth.accessToken({ forceRefresh: false });
  } catch (e) {
    throw tokenError(e);
  }
  try {
    return await open(account, token, opts);
  } catch (e) {
    if (!isCadenzaError(e, 'MAILBOX_AUTH_FAILED')) throw e;
  }
  try {
    token = await account.auth.accessToken({ forceRefresh: true });
  } catch (e) {
    throw tokenError(e);
  }
  return open(account, token, opts);
}

async function open(account: ImapAccount, token: string | undefined, { logger, flow }: ConnectOptions): Promise<ImapFlow> {
  // The host under the destination policy, resolved once: the socket goes to the vetted address.
  const pin = await pinnedHost(account.endpoint.host).catch((e: unknown) => {
    throw isCadenzaError(e, 'INVALID_INPUT') ? cadenzaError('MAILBOX_UNAVAILABLE', `IMAP connect: ${e.message}`, { doing: 'connect', refused: true }) : imapError(e, 'connect');
  });
  const client = new ImapFlow({ ...imapFlowOptions(account, token, flow), ...pin });
  // imapflow emits 'error' for socket trouble outside a command; without a listener Node would
  // throw it and take the worker down (promise 8). The failing command rejects on its own.
  client.on('error', (e: Error) => logger?.debug({ err: { message: e.message, code: (e as { code?: string }).code } }, 'imap connection error'));
  try {
    await client.connect();
    // IMAP is a conversation of small writes, each waiting for an answer; with Nagle's algorithm
    // a command written in parts can wait out the server's delayed ACK (~40 ms a round trip
    // here). imapflow does not set it, and exposes no hook before the greeting.
    (client as unknown as { socket?: { setNoDelay?: (on: boolean) => void } }).socket?.setNoDelay?.(true);
    return client;
  } catch (e) {
    client.close();
    throw imapError(e, 'connect');
  }
}

function tokenError(e: unknown) {
  const transient = (e as { transient?: unknown })?.transient === true;
  const message = e instanceof Error ? e.message : String(e);
  return transient
    ? cadenzaError('MAILBOX_UNAVAILABLE', `IMAP connect: no access token (${message})`, { doing: 'token', transient })
    : cadenzaError('MAILBOX_AUTH_FAILED', `IMAP connect: no access token (${message})`, { doing: 'token' });
}

/**
 * Runs fn on a fresh connection and always closes it: LOGOUT when the connection is healthy,
 * else the socket is just destroyed (a LOGOUT to a dead server would wait for socketTimeout).
 */
export async function withImap<T>(account: ImapAccount, fn: (client: ImapFlow) => Promise<T>, opts: ConnectOptions = {}): Promise<T> {
  const client = await connectImap(account, opts);
  let ok = false;
  try {
    const result = await fn(client);
    ok = true;
    return result;
  } finally {
    if (ok && client.usable) await client.logout().catch(() => client.close());
    else client.close();
  }
}
