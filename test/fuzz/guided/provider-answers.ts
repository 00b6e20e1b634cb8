/**
 * Seed answers of the Gmail API and Microsoft Graph, shaped as their reference pages show them
 * (developers.google.com/workspace/gmail/api/reference/rest, learn.microsoft.com/graph/api), one
 * per decoder and branch: the fuzzer grows the rest from these.
 */
export const GMAIL_ANSWERS: readonly string[] = [
  '{"id":"18c1","threadId":"18c0","labelIds":["INBOX","UNREAD"],"internalDate":"1764410000000","historyId":"4242"}',
  '{"id":"18c1","threadId":"18c0","raw":"RnJvbTogYUBleGFtcGxlLmNvbQ0KU3ViamVjdDogaGkNCg0KaGVsbG8NCg","historyId":"4243"}',
  '{"id":"18c1","threadId":"18c0","payload":{"headers":[{"name":"Message-ID","value":"<a@example.com>"},{"name":"In-Reply-To","value":"<b@vendor.test>"}]}}',
  '{"messages":[{"id":"1","threadId":"1"},{"id":"2","threadId":"1"}],"nextPageToken":"tok","resultSizeEstimate":2}',
  '{"resultSizeEstimate":0}',
  '{"history":[{"id":"5","messages":[{"id":"1","threadId":"1"}],"messagesAdded":[{"message":{"id":"1","threadId":"1","labelIds":["INBOX"]}}]}],"nextPageToken":"p2","historyId":"6"}',
  '{"historyId":"7"}',
  '{"emailAddress":"rep@vendor.test","messagesTotal":10,"threadsTotal":8,"historyId":"4242"}',
  '{"historyId":"4242","expiration":"1764500000000"}',
  '{"error":{"code":429,"message":"User-rate limit exceeded.  Retry after 2026-11-29T12:52:16.364Z","errors":[{"message":"User-rate limit exceeded.","domain":"usageLimits","reason":"rateLimitExceeded"}],"status":"RESOURCE_EXHAUSTED"}}',
  '{"error":{"code":401,"message":"Request had invalid authentication credentials.","errors":[{"domain":"global","reason":"authError","location":"Authorization"}],"status":"UNAUTHENTICATED"}}',
];

export const GRAPH_ANSWERS: readonly string[] = [
  '{"id":"AAMk1","internetMessageId":"<a@example.com>","conversationId":"AAQk1","parentFolderId":"AAMkIn","isDraft":false,"sentDateTime":"2026-11-29T10:00:00Z","receivedDateTime":"2026-11-29T10:00:01Z","subject":"Re: hello"}',
  '{"@odata.context":"https://graph.microsoft.com/v1.0/$metadata#users(\'x\')/messages","value":[{"id":"AAMk1","subject":"a"},{"id":"AAMk2","isDraft":true}],"@odata.nextLink":"https://graph.microsoft.com/v1.0/me/messages?$skip=10"}',
  '{"value":[{"id":"AAMk1","receivedDateTime":"2026-11-29T10:00:01Z"},{"id":"AAMk3","@removed":{"reason":"deleted"}}],"@odata.deltaLink":"https://graph.microsoft.com/v1.0/me/mailFolders/inbox/messages/delta?$deltatoken=abc"}',
  '{"value":[],"@odata.nextLink":"https://graph.microsoft.com/v1.0/me/mailFolders/inbox/messages/delta?$skiptoken=def"}',
  '{"id":"7f105c7d-2dc5-4530-97cd-4e7ae6534c07","resource":"me/mailFolders(\'Inbox\')/messages","changeType":"created","expirationDateTime":"2026-12-01T11:23:00.000Z"}',
  '{"error":{"code":"TooManyRequests","message":"Please retry again later.","innerError":{"code":"ApplicationThrottled","request-id":"r","date":"2026-11-29T10:00:00"}}}',
  '{"error":{"code":"SyncStateNotFound","message":"The sync state generation is not found."}}',
];

/** Retry-After values as providers send them (delay-seconds, decimal seconds, an HTTP-date). */
export const RETRY_AFTER_VALUES: readonly string[] = ['10', '2.128', 'Sun, 29 Nov 2026 10:00:00 GMT', '', ' 5 ', '-1', '1e3'];
