import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim-clock.ts';
import { rawMessage } from '../messages.ts';
import { startGmailEmulator, type GmailEmulator } from './emulator.ts';
import { gmailErrors } from './errors.ts';

/**
 * The emulator's own promises, checked over HTTP: the documented answers a connector may meet that
 * the transport tests do not reach (error shapes, no idempotency, search, paging, formats).
 */
const REP = 'rep@acme.test';
let emu: GmailEmulator;
let token: string;
const clock = new SimClock(Date.UTC(2026, 0, 5, 8, 0, 0));

beforeEach(async () => {
  emu = await startGmailEmulator({ users: [REP], clock });
  token = emu.tokens.issue(REP);
});
afterEach(async () => {
  await emu.close();
});

async function call(method: string, path: string, body?: unknown, auth: string | null = token) {
  const res = await fetch(`${emu.baseUrl}/gmail/v1/users/${path}`, {
    method,
    headers: { ...(auth ? { authorization: `Bearer ${auth}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

const raw = (id: string, over: Partial<Parameters<typeof rawMessage>[0]> = {}) =>
  rawMessage({ from: REP, to: ['p@x.test'], subject: 'Hi', messageId: id, ...over }).toString('base64url');

describe('Gmail emulator', () => {
  it('401 authError with the documented body and WWW-Authenticate; another user is 403 forbidden', async () => {
    const r = await call('GET', 'me/messages', undefined, null);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toContain('invalid_token');
    expect(r.json.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED', errors: [{ reason: 'authError', domain: 'global', location: 'Authorization' }] });
    emu.tokens.expire(token);
    expect((await call('GET', 'me/messages')).status).toBe(401);
    const fresh = emu.tokens.issue(REP);
    expect((await call('GET', 'someone@else.test/messages', undefined, fresh)).json.error.errors[0].reason).toBe('forbidden');
    expect((await call('GET', `${REP}/messages`, undefined, fresh)).status).toBe(200);
  });

  it('send validates like Gmail: raw required, base64url, a recipient', async () => {
    expect((await call('POST', 'me/messages/send', { threadId: 'x' })).json.error.message).toContain("'raw' RFC822 payload");
    expect((await call('POST', 'me/messages/send', { raw: 'a+b/' })).json.error.message).toContain('Base64 decoding failed');
    const noTo = Buffer.from('From: rep@acme.test\r\nSubject: x\r\nMessage-ID: <n@x>\r\n\r\nhi').toString('base64url');
    expect((await call('POST', 'me/messages/send', { raw: noTo })).json.error).toMatchObject({ code: 400, message: 'Recipient address required' });
    expect((await call('POST', 'me/messages/send', { raw: raw('<b@x>', { to: ['not an address'] }) })).json.error.message).toBe('Invalid To header');
  });

  it('no idempotency: the same message sent twice is two messages, both found by rfc822msgid (with or without brackets)', async () => {
    const a = await call('POST', 'me/messages/send', { raw: raw('<dup@acme.test>') });
    const b = await call('POST', 'me/messages/send', { raw: raw('<dup@acme.test>') });
    expect(a.status).toBe(200);
    expect(a.json.labelIds).toEqual(['SENT']);
    expect(a.json.id).not.toBe(b.json.id);
    for (const q of ['rfc822msgid:<dup@acme.test>', 'rfc822msgid:dup@acme.test', 'rfc822msgid:<DUP@acme.test> in:sent']) {
      const l = await call('GET', `me/messages?q=${encodeURIComponent(q)}`);
      expect(l.json.messages.map((m: { id: string }) => m.id).sort(), q).toEqual([a.json.id, b.json.id].sort());
    }
    expect((await call('GET', `me/messages?q=${encodeURIComponent('rfc822msgid:<dup@acme.test> in:inbox')}`)).json).toEqual({ resultSizeEstimate: 0 });
  });

  it('list: unsupported search terms are refused loudly; paging; trash only with includeSpamTrash', async () => {
    expect((await call('GET', `me/messages?q=${encodeURIComponent('subject:someone')}`)).json.error.message).toContain('not supported');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1_000);
      ids.push((await call('POST', 'me/messages/send', { raw: raw(`<p${i}@acme.test>`) })).json.id);
    }
    const p1 = await call('GET', 'me/messages?maxResults=2');
    expect(p1.json.messages.map((m: { id: string }) => m.id)).toEqual([ids[2], ids[1]]); // newest first
    const p2 = await call('GET', `me/messages?maxResults=2&pageToken=${p1.json.nextPageToken}`);
    expect(p2.json.messages.map((m: { id: string }) => m.id)).toEqual([ids[0]]);
    expect(p2.json.nextPageToken).toBeUndefined();
    emu.mailbox(REP).messages.get(ids[0]!)!.labelIds.add('TRASH');
    expect((await call('GET', 'me/messages?q=rfc822msgid:p0@acme.test')).json.messages).toBeUndefined();
    expect((await call('GET', 'me/messages?q=rfc822msgid:p0@acme.test&includeSpamTrash=true')).json.messages).toHaveLength(1);
    expect((await call('GET', 'me/messages?maxResults=501')).status).toBe(400);
  });

  it('get: minimal, metadata with chosen headers, raw bytes unchanged; full refused; unknown id 404; historyId rises', async () => {
    const sent = await call('POST', 'me/messages/send', { raw: raw('<g@acme.test>') });
    const second = await call('POST', 'me/messages/send', { raw: raw('<g2@acme.test>') });
    const min = await call('GET', `me/messages/${sent.json.id}?format=minimal`);
    expect(min.json).toMatchObject({ id: sent.json.id, threadId: sent.json.threadId, labelIds: ['SENT'], internalDate: String(clock.now()) });
    const min2 = await call('GET', `me/messages/${second.json.id}?format=minimal`);
    expect(Number(min2.json.historyId)).toBeGreaterThan(Number(min.json.historyId));
    const meta = await call('GET', `me/messages/${sent.json.id}?format=metadata&metadataHeaders=Message-ID&metadataHeaders=subject`);
    expect(meta.json.payload.headers).toEqual([
      { name: 'Subject', value: 'Hi' },
      { name: 'Message-ID', value: '<g@acme.test>' },
    ]);
    const r = await call('GET', `me/messages/${sent.json.id}?format=raw`);
    expect(r.json.raw).toBe(raw('<g@acme.test>'));
    expect((await call('GET', `me/messages/${sent.json.id}?format=full`)).status).toBe(400);
    expect((await call('GET', 'me/messages/0123456789abcdef')).json.error.errors[0].reason).toBe('notFound');
  });

  it('faults are consumed in order, `times` repeats one, and the request log shows what happened', async () => {
    emu.faults.inject('messages.list', { kind: 'respond', ...gmailErrors.backendError(503) }, 2);
    emu.faults.inject('messages.list', { kind: 'respond', ...gmailErrors.tooManyConcurrent(3) });
    expect((await call('GET', 'me/messages')).status).toBe(503);
    expect((await call('GET', 'me/messages')).status).toBe(503);
    const third = await call('GET', 'me/messages');
    expect([third.status, third.headers.get('retry-after')]).toEqual([429, '3']);
    expect((await call('GET', 'me/messages')).status).toBe(200);
    expect(emu.faults.pending()).toBe(0);
    expect(emu.requests.map((r) => r.outcome)).toEqual([503, 503, 429, 200]);
    // A fault never pre-empts the token check, as on the real service.
    emu.faults.inject('messages.list', { kind: 'respond', ...gmailErrors.backendError() });
    expect((await call('GET', 'me/messages', undefined, 'bogus')).status).toBe(401);
    expect(emu.faults.pending()).toBe(1);
  });
});
