import type { FaultInjector } from './faults.ts';
import type { RequestRecord } from './server.ts';
import { testTokenSource, type TestTokenSource, type TokenRegistry } from './tokens.ts';

interface MailboxStore<M> {
  addUser(address: string): M;
  mailbox(address: string): M | undefined;
}

/** What the Gmail and the Graph emulator both give a test. */
export interface MailEmulatorBase<S, M> {
  baseUrl: string;
  store: S;
  tokens: TokenRegistry;
  faults: FaultInjector;
  /** Every request, in order, with what it got. */
  requests: RequestRecord[];
  addUser(address: string): M;
  mailbox(address: string): M;
  /** A token source for `user` that issues a fresh token on refresh (see tokens.ts). */
  tokenSource(user: string, opts?: Parameters<typeof testTokenSource>[2]): TestTokenSource;
}

/** `address`'s mailbox; a test that names one the emulator does not have is wrong, so this throws. */
export function mailboxOf<M>(emulator: string, store: MailboxStore<M>, address: string): M {
  const mb = store.mailbox(address);
  if (!mb) throw new Error(`${emulator} emulator: no mailbox ${address}`);
  return mb;
}

export function mailEmulatorBase<S extends MailboxStore<M>, M>(
  emulator: string,
  parts: { baseUrl: string; store: S; tokens: TokenRegistry; faults: FaultInjector; log: RequestRecord[] },
): MailEmulatorBase<S, M> {
  const { store, tokens } = parts;
  return {
    baseUrl: parts.baseUrl,
    store,
    tokens,
    faults: parts.faults,
    requests: parts.log,
    addUser: (a) => store.addUser(a),
    mailbox: (a) => mailboxOf(emulator, store, a),
    tokenSource: (user, o) => testTokenSource(tokens, user, o),
  };
}
