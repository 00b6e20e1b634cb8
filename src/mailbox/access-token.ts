/**
 * Supplies an OAuth 2 access token: XOAUTH2 for SMTP and IMAP, Bearer for the Gmail API and
 * Microsoft Graph. The caller asks again with forceRefresh after the provider refused a token,
 * once per attempt. It throws when no token can be had: an error whose `transient` property is
 * true (the token endpoint could not be reached, answered 5xx) means "try later"; any other (the
 * grant was revoked, invalid_grant) means the mailbox must be reconnected.
 *
 * The one declaration: the connectors (mailbox/connectors/), the IMAP account (imap/account.ts),
 * the provider HTTP clients (providers/call.ts TokenSource) and the token refresher
 * (oauth/mailbox-tokens.ts) all speak it.
 */
export type AccessTokenProvider = (opts: { forceRefresh: boolean }) => Promise<string>;
