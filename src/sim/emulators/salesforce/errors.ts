import type { EmulatorReply } from '../server.ts';

/**
 * Salesforce's error answers. The REST API's shape (REST API Developer Guide, "Status Codes and
 * Error Responses") is a JSON array of `{message, errorCode, fields?}`; the OAuth endpoints answer
 * `{error, error_description}` (Connected App docs, "OAuth 2.0 Refresh Token Flow"). Message texts the
 * docs do not print are marked unverified where they are built.
 */

export interface SfError {
  message: string;
  errorCode: string;
  fields?: string[];
}

export const sfError = (status: number, errorCode: string, message: string, fields?: string[]): EmulatorReply => ({
  status,
  body: [{ message, errorCode, ...(fields ? { fields } : {}) }],
});

export const sfErrors = {
  /** Documented for a missing, expired or revoked session. */
  invalidSession: () => sfError(401, 'INVALID_SESSION_ID', 'Session expired or invalid'),
  /** Documented: the org's rolling 24-hour API allocation is used up. */
  requestLimitExceeded: () => sfError(403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.'),
  notFound: () => sfError(404, 'NOT_FOUND', 'The requested resource does not exist'),
  malformedQuery: (message: string) => sfError(400, 'MALFORMED_QUERY', message),
  /** The text is the one Salesforce prints for an unknown column (the row/column pointer above it left out). */
  invalidField: (field: string, object: string) =>
    sfError(
      400,
      'INVALID_FIELD',
      `No such column '${field}' on entity '${object}'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.`,
    ),
  invalidType: (object: string) => sfError(400, 'INVALID_TYPE', `sObject type '${object}' is not supported.`),
  /** A write naming a field the object lacks. Text as Salesforce's DML deserializer words it (unverified for collections). */
  noSuchColumn: (field: string, object: string) => sfError(400, 'INVALID_FIELD', `No such column '${field}' on sobject of type ${object}`),
  /** A body that is not the documented JSON. Text unverified. */
  jsonParser: (message: string) => sfError(400, 'JSON_PARSER_ERROR', message),
  /** An upsert URL naming a field that is not an external id. Text as for single-record upsert; for collections unverified. */
  notExternalId: (field: string) => sfError(404, 'NOT_FOUND', `Provided external ID field does not exist or is not accessible: ${field}`),
  /** sObject Collections take at most 200 records. Code and text unverified. */
  tooManyRecords: () => sfError(400, 'EXCEEDED_ID_LIMIT', 'record limit reached. cannot submit more than 200 records into this call'),
  /** A query locator past its life (documented: 15 minutes unused) or unknown. */
  invalidQueryLocator: () => sfError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator'),
  internal: () => sfError(500, 'UNKNOWN_EXCEPTION', 'An unexpected error occurred. Please include this ErrorId if you contact support: 1234567890-12345 (-123456789)'),
  /** What an outage looks like from outside: a 503 page, not a JSON body (unverified; a connector must not depend on the body of a 5xx). */
  unavailable: (): EmulatorReply => ({ status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>Service Unavailable</h1></body></html>' }),
};

/** OAuth endpoint errors (RFC 6749 §5.2 shape; the descriptions are the ones Salesforce's docs and forums show). */
export const oauthErrors = {
  invalidGrant: (description = 'expired access/refresh token'): EmulatorReply => ({ status: 400, body: { error: 'invalid_grant', error_description: description } }),
  redirectUriMismatch: (): EmulatorReply => ({ status: 400, body: { error: 'redirect_uri_mismatch', error_description: 'redirect_uri must match configuration' } }),
  invalidClientId: (): EmulatorReply => ({ status: 400, body: { error: 'invalid_client_id', error_description: 'client identifier invalid' } }),
  invalidClient: (): EmulatorReply => ({ status: 400, body: { error: 'invalid_client', error_description: 'invalid client credentials' } }),
  unsupportedGrantType: (): EmulatorReply => ({ status: 400, body: { error: 'unsupported_grant_type', error_description: 'grant type not supported' } }),
  /** Revoke of a token the server does not know. Text unverified. */
  unsupportedTokenType: (): EmulatorReply => ({ status: 400, body: { error: 'unsupported_token_type', error_description: 'this token type is not supported' } }),
  /** userinfo with a bad token answers 403 with this text, not JSON (unverified). */
  badOAuthToken: (): EmulatorReply => ({ status: 403, headers: { 'content-type': 'text/plain' }, body: 'Bad_OAuth_Token' }),
};
