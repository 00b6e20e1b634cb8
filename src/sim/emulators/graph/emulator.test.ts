import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim-clock.ts';
import { rawMessage } from '../messages.ts';
import { startGraphEmulator, type GraphEmulator } from './emulator.ts';
import { graphErrors } from './errors.ts';

/**
 * The emulator's own promises, checked over HTTP: the documented answers a connector may meet that
 * the transport tests do not reach (error shapes, ids across the move to Sent Items, OData
 * options, $value, no idempotency).
 */
const REP = 'rep@contoso.test';
let emu: GraphEmulator;
let token: string;
let clock: SimClock;

beforeEach(async () => {
  clock = new SimClock(Date.UTC(2026, 0, 5, 8, 0, 0));
  emu = await startGraphEmulator({ users: [REP], clock });
  token = emu.tokens.issue(REP);
});
afterEach(async () => {
  await emu.close();
});

async function call(method: string, path: string, opts: { body?: string; type?: string; auth?: string | null; prefer?: string } = {}) {
  const auth = opts.auth === undefined ? token : opts.auth;
  const res = await fetch(`${emu.baseUrl}/${path}`, {
    method,
    headers: {
      ...(auth ? { authorization: `Bearer ${auth}` } : {}),
      ...(opts.type ? { 'content-type': opts.type } : {}),
      ...(opts.prefer ? { prefer: opts.prefer } : {}),
    },
    body: opts.body,
  });
  const buf = Buffer.from(await res.arrayBuffer());
  const json = (res.headers.get('content-type') ?? '').includes('json') && buf.length ? JSON.parse(buf.toString()) : undefined;
  return { status: res.status, headers: res.headers, json, buf };
}

const mime = (id: string, over: Partial<Parameters<typeof rawMessage>[0]> = {}) =>
  rawMessage({ from: REP, to: ['p@x.test'], subject: 'Hi', messageId: id, ...over });
const send = (raw: Buffer) => call('POST', 'me/sendMail', { body: raw.toString('base64'), type: 'text/plain' });
const filterQ = (id: string) => `$filter=${encodeURIComponent(`internetMessageId eq '${id.replaceAll("'", "''")}'`)}`;

describe('Graph emulator', () => {
  it('401 InvalidAuthenticationToken with request-id in header and innerError; a user without a mailbox is 404', async () => {
    const r = await call('GET', 'me/messages', { auth: null });
    expect(r.status).toBe(401);
    expect(r.json.error).toMatchObject({ code: 'InvalidAuthenticationToken', message: 'Access token is empty.' });
    expect(r.json.error.innerError['request-id']).toBe(r.headers.get('request-id'));
    const stranger = emu.tokens.issue('nobody@contoso.test');
    expect((await call('GET', 'me/messages', { auth: stranger })).json.error.code).toBe('MailboxNotEnabledForRESTAPI');
  });

  it('sendMail: 202 with an empty body; JSON form and bad base64 refused with their codes; no idempotency', async () => {
    const ok = await send(mime('<s1@contoso.test>'));
    expect([ok.status, ok.buf.length]).toEqual([202, 0]);
    expect((await call('POST', 'me/sendMail', { body: '{"message":{}}', type: 'application/json' })).json.error.message).toContain('only the MIME form');
    expect((await call('POST', 'me/sendMail', { body: 'not base64!', type: 'text/plain' })).json.error.code).toBe('ErrorMimeContentInvalidBase64String');
    const noTo = Buffer.from('From: rep@contoso.test\r\nSubject: x\r\nMessage-ID: <n@x>\r\n\r\nhi');
    expect((await send(noTo)).json.error.code).toBe('ErrorInvalidRecipients');
    await send(mime('<s1@contoso.test>'));
    expect(emu.mailbox(REP).byInternetMessageId('<s1@contoso.test>')).toHaveLength(2);
  });

  it('a regular id stops working when the draft moves to Sent Items; the immutable id does not; $value is the bytes sent', async () => {
    emu.setSentItemsDelay(5_000);
    const raw = mime('<mv@contoso.test>');
    await send(raw);
    const before = await call('GET', `me/messages?${filterQ('<mv@contoso.test>')}&$select=isDraft,parentFolderId`);
    const beforeImm = await call('GET', `me/messages?${filterQ('<mv@contoso.test>')}`, { prefer: 'IdType="ImmutableId"' });
    expect(beforeImm.headers.get('preference-applied')).toBe('IdType="ImmutableId"');
    const regular = before.json.value[0].id as string;
    const immutable = beforeImm.json.value[0].id as string;
    expect(before.json.value[0]).toMatchObject({ isDraft: true });
    expect(Object.keys(before.json.value[0]).sort()).toEqual(['@odata.etag', 'id', 'isDraft', 'parentFolderId']);
    expect((await call('GET', `me/messages/${regular}`)).status).toBe(200);
    expect((await call('GET', 'me/mailFolders/sentitems/messages')).json.value).toEqual([]);

    clock.advance(5_000);
    expect((await call('GET', `me/messages/${regular}`)).json.error.code).toBe('ErrorItemNotFound');
    const moved = await call('GET', `me/messages/${immutable}?$select=isDraft,sentDateTime`);
    expect(moved.json).toMatchObject({ isDraft: false, sentDateTime: '2026-01-05T08:00:05Z' });
    const inSent = await call('GET', 'me/mailFolders/SentItems/messages');
    expect(inSent.json.value.map((m: { internetMessageId: string }) => m.internetMessageId)).toEqual(['<mv@contoso.test>']);
    const value = await call('GET', `me/messages/${immutable}/$value`);
    expect(value.buf.equals(raw)).toBe(true);
    expect((await call('GET', 'me/mailFolders/nosuch/messages')).status).toBe(404);
  });

  it('OData: unknown properties and operators refused, quotes doubled, $top pages with a nextLink', async () => {
    expect((await call('GET', `me/messages?$filter=${encodeURIComponent("nope eq 'x'")}`)).json.error.message).toContain("property named 'nope'");
    expect((await call('GET', `me/messages?$filter=${encodeURIComponent("subject ne 'x'")}`)).status).toBe(400);
    expect((await call('GET', 'me/messages?$select=bogus')).status).toBe(400);
    await send(mime("<it's@contoso.test>"));
    expect((await call('GET', `me/messages?${filterQ("<it's@contoso.test>")}`)).json.value).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      clock.advance(1_000);
      await send(mime(`<pg${i}@contoso.test>`));
    }
    const p1 = await call('GET', 'me/messages?$top=2&$select=internetMessageId');
    expect(p1.json.value.map((m: { internetMessageId: string }) => m.internetMessageId)).toEqual(['<pg1@contoso.test>', '<pg0@contoso.test>']);
    const next = new URL(p1.json['@odata.nextLink']);
    const p2 = await fetch(next, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
    expect(p2.value.map((m: { internetMessageId: string }) => m.internetMessageId)).toEqual(["<it's@contoso.test>"]);
    expect(p2['@odata.nextLink']).toBeUndefined();
  });

  it("OData reads the query as RFC 3986: '+' in a $filter is a plus, not a space; a nextLink keeps the filter percent-encoded", async () => {
    const at = new Date(clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    expect((await call('GET', `me/mailFolders/sentitems/messages?$filter=sentDateTime+ge+${at}`)).status).toBe(400);
    for (let i = 0; i < 3; i++) await send(mime(`<s${i}@contoso.test>`));
    const p1 = await call('GET', `me/mailFolders/sentitems/messages?$filter=${encodeURIComponent(`sentDateTime ge ${at}`)}&$top=2`);
    expect(p1.json.value).toHaveLength(2);
    const next: string = p1.json['@odata.nextLink'];
    expect(next).not.toContain('+');
    expect(next).toContain('$skip=2');
    const p2 = await fetch(next, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
    expect(p2.value).toHaveLength(1);
  });

  it('/users/{upn} reaches the same mailbox; another user is ErrorAccessDenied; faults go through the same door', async () => {
    await call('POST', `users/${encodeURIComponent(REP)}/sendMail`, { body: mime('<u@contoso.test>').toString('base64'), type: 'text/plain' });
    expect(emu.mailbox(REP).byInternetMessageId('<u@contoso.test>')).toHaveLength(1);
    expect((await call('GET', 'users/other@contoso.test/messages')).json.error.code).toBe('ErrorAccessDenied');
    emu.faults.inject('messages.list', { kind: 'respond', ...graphErrors.tooManyRequests('2.128') });
    const r = await call('GET', 'me/messages');
    expect([r.status, r.headers.get('retry-after'), r.json.error.code, r.json.error.innerError.code]).toEqual([429, '2.128', 'TooManyRequests', '429']);
  });
});
