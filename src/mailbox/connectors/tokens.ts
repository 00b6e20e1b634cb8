import { cadenzaError } from '../../common/errors.ts';
import type { AccessTokenProvider } from '../access-token.ts';
import type { ConnectorDeps, MailboxRow } from './connector.ts';

/** The access-token provider of an API mailbox (Gmail, Graph), or CONFIG_INVALID: without one it can do nothing. */
export function requireTokens(mailbox: MailboxRow, deps: ConnectorDeps): AccessTokenProvider {
  if (!deps.tokens) throw cadenzaError('CONFIG_INVALID', `mailbox ${mailbox.email} (${mailbox.provider}) needs an access-token provider: an OAuth grant and this process's token source`, { mailboxId: mailbox.id });
  return deps.tokens;
}
