import { describe, expect, it } from 'vitest';
import { graphContext } from './api.ts';
import { deltaStartUrl, isDeltaExpired } from './messages-delta.ts';

describe('Graph delta helpers', () => {
  it('reads every documented way of saying the delta state is gone, and nothing else', () => {
    expect(isDeltaExpired(410, [])).toBe(true);
    expect(isDeltaExpired(410, ['resyncRequired'])).toBe(true);
    expect(isDeltaExpired(400, ['SyncStateNotFound'])).toBe(true);
    expect(isDeltaExpired(400, ['InvalidSyncStateData'])).toBe(true);
    expect(isDeltaExpired(400, ['BadRequest'])).toBe(false);
    expect(isDeltaExpired(404, ['ErrorItemNotFound'])).toBe(false);
    expect(isDeltaExpired(503, ['resyncRequired'])).toBe(false);
  });

  it('builds the first call with $select and the one filter delta takes, spaces as %20', () => {
    const ctx = graphContext({ baseUrl: 'http://127.0.0.1:9/v1.0', user: 'rep@contoso.test', tokens: async () => 't' });
    const u = deltaStartUrl(ctx, 'junkemail', { select: ['id', 'conversationId'], receivedSince: Date.UTC(2026, 10, 1, 12, 0, 0, 123) });
    expect(u.toString()).toBe(
      'http://127.0.0.1:9/v1.0/users/rep%40contoso.test/mailFolders/junkemail/messages/delta?$select=id%2CconversationId&$filter=receivedDateTime%20ge%202026-11-01T12%3A00%3A00Z',
    );
    expect(ctx.serviceRoot.toString()).toBe('http://127.0.0.1:9/v1.0/');
  });
});
