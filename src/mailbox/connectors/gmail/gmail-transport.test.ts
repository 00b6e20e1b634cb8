import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../../common/clock.ts';
import { isCadenzaError } from '../../../common/errors.ts';
import { gmailErrors } from '../../../sim/emulators/gmail/errors.ts';
import { startGmailEmulator, type GmailEmulator } from '../../../sim/emulators/gmail/emulator.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../../test/leaks.ts';
import { rawMessage, type TestMessage } from '../../../sim/emulators/messages.ts';
import { GmailTransport } from './gmail-transport.ts';
import { notSent, type SendOutcome } from '../outcomes.ts';

const REP = 'rep@acme.test';
const PROSPECT = 'dana@prospect.test';
const T0 = Date.UTC(2026, 2, 2, 14, 0, 0);

/** Wall-clock timers (for the HTTP deadline) with a fixed "now" (for Retry-After arithmetic). */
const fixedNow: Clock = { ...systemClock, now: () => T0 };

let emu: GmailEmulator;
let seq = 0;
let handles: HandleCounts;

beforeEach(async () => {
  handles = handleCounts();
  emu = await startGmailEmulator({ users: [REP, PROSPECT], clock: fixedNow });
});
afterEach(async () => {
  await emu.close();
  await expectNoLeaks(handles);
});

function msg(over: Partial<TestMessage> = {}): { raw: Buffer; m: TestMessage } {
  const m: TestMessage = { from: `Rep <${REP}>`, to: [PROSPECT], subject: 'Quick question', messageId: `<step-${++seq}@acme.test>`, ...over };
  return { raw: rawMessage(m), m };
}

function transport(over: Partial<ConstructorParameters<typeof GmailTransport>[0]> = {}) {
  const tokens = emu.tokenSource(REP);
  return { t: new GmailTransport({ baseUrl: emu.baseUrl, tokens, clock: fixedNow, timeoutMs: 5_000, ...over }), tokens };
}

async function sendOne(t: GmailTransport, over: Partial<TestMessage> = {}, threadId?: string) {
  const { raw, m } = msg(over);
  const out = await t.send(raw, { from: REP, to: [...m.to, ...(m.cc ?? [])] }, { messageId: m.messageId, threadId });
  return { out, raw, m };
}

function expectKind<K extends SendOutcome['kind']>(o: SendOutcome, kind: K): Extract<SendOutcome, { kind: K }> {
  expect(o.kind, JSON.stringify(o)).toBe(kind);
  return o as Extract<SendOutcome, { kind: K }>;
}

describe('Gmail transport against the emulator', () => {
  it('accepted: the exact bytes land in SENT under our Message-ID, and findSent finds them', async () => {
    const { t } = transport();
    const { out, raw, m } = await sendOne(t);
    const a = expectKind(out, 'accepted');
    expect(a.providerId).toMatch(/^[0-9a-f]{16}$/);
    expect(a.threadId).toBe(a.providerId);
    expect(a.sentCopy).toBe('server');
    expect(a.confirm).toBeUndefined();
    const copies = emu.mailbox(REP).byMessageId(m.messageId);
    expect(copies).toHaveLength(1);
    expect(copies[0]!.raw.equals(raw)).toBe(true);
    expect([...copies[0]!.labelIds]).toEqual(['SENT']);
    // The prospect's mailbox (also emulated) received it.
    expect(emu.mailbox(PROSPECT).byMessageId(m.messageId)).toHaveLength(1);
    expect(await t.findSent(m.messageId)).toEqual({ status: 'found', sentAt: T0, providerId: a.providerId, threadId: a.threadId });
    expect(await t.findSent('<never-sent@acme.test>')).toEqual({ status: 'not_found' });
    // The rep deleted the Sent copy: still sent (the search includes Trash).
    copies[0]!.labelIds.add('TRASH');
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'found' });
    // A draft that was never sent proves nothing.
    copies[0]!.labelIds = new Set(['DRAFT']);
    expect(await t.findSent(m.messageId)).toEqual({ status: 'not_found' });
  });

  it('a follow-up with threadId lands in the same Gmail thread; without it, or with another subject, it does not', async () => {
    const { t } = transport();
    const first = await sendOne(t, { subject: 'Quick question' });
    const threadId = expectKind(first.out, 'accepted').threadId!;
    // The prospect replies; it arrives in the rep's inbox and Gmail threads it by its headers.
    const reply = rawMessage({
      from: PROSPECT,
      to: [REP],
      subject: 'Re: Quick question',
      messageId: '<reply-1@prospect.test>',
      inReplyTo: first.m.messageId,
      references: [first.m.messageId],
    });
    expect((await emu.deliver(REP, reply)).threadId).toBe(threadId);

    const follow = await sendOne(
      t,
      { subject: 'Re: Quick question', inReplyTo: '<reply-1@prospect.test>', references: [first.m.messageId, '<reply-1@prospect.test>'] },
      threadId,
    );
    expect(expectKind(follow.out, 'accepted').threadId).toBe(threadId);
    expect(emu.mailbox(REP).thread(threadId).map((x) => x.parsed.messageId)).toEqual([
      first.m.messageId,
      '<reply-1@prospect.test>',
      follow.m.messageId,
    ]);
    expect(await t.findSent(follow.m.messageId)).toMatchObject({ status: 'found', threadId });

    // Gmail's rule: no threadId, no thread, whatever the headers say.
    const noThread = await sendOne(t, { subject: 'Re: Quick question', inReplyTo: first.m.messageId, references: [first.m.messageId] });
    expect(expectKind(noThread.out, 'accepted').threadId).not.toBe(threadId);
    // And a threadId with a subject that does not match starts a thread of its own.
    const otherSubject = await sendOne(t, { subject: 'Something else', inReplyTo: first.m.messageId, references: [first.m.messageId] }, threadId);
    expect(expectKind(otherSubject.out, 'accepted').threadId).not.toBe(threadId);
  });

  it('a threadId Gmail no longer knows (404): sent again at once without it, one copy in all', async () => {
    const { t } = transport();
    const { out, m } = await sendOne(t, {}, 'ffffffffffffffff');
    const a = expectKind(out, 'accepted');
    expect(a.threadId).toBe(a.providerId);
    expect(emu.requests.filter((r) => r.route === 'messages.send').map((r) => r.outcome)).toEqual([404, 200]);
    expect(emu.mailbox(REP).byMessageId(m.messageId)).toHaveLength(1);
  });

  it('401: the token is refreshed once and the send goes through', async () => {
    const { t, tokens } = transport();
    emu.tokens.expire(tokens.current);
    const { out, m } = await sendOne(t);
    expectKind(out, 'accepted');
    expect(tokens.calls).toEqual([{ forceRefresh: false }, { forceRefresh: true }]);
    expect(emu.mailbox(REP).byMessageId(m.messageId)).toHaveLength(1);
  });

  it('401 again after the refresh: auth_failed, nothing sent', async () => {
    const tokens = emu.tokenSource(REP, { onRefresh: 'same' });
    emu.tokens.expire(tokens.current);
    const t = new GmailTransport({ baseUrl: emu.baseUrl, tokens, timeoutMs: 5_000 });
    const { out, m } = await sendOne(t);
    const f = expectKind(out, 'auth_failed');
    expect(f.responseCode).toBe(401);
    expect(f.reason).toContain('authError');
    expect(tokens.calls).toHaveLength(2);
    expect(emu.mailbox(REP).byMessageId(m.messageId)).toHaveLength(0);
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'unavailable' });
  });

  it('a token supplier that fails: auth_failed for a dead grant, transient when it says so', async () => {
    const dead = new GmailTransport({ baseUrl: emu.baseUrl, tokens: async () => Promise.reject(new Error('invalid_grant')) });
    expect(expectKind((await sendOne(dead)).out, 'auth_failed')).toMatchObject({ phase: 'auth', responseCode: null });
    const flaky = new GmailTransport({
      baseUrl: emu.baseUrl,
      tokens: async () => Promise.reject(Object.assign(new Error('token endpoint unreachable'), { transient: true })),
    });
    expect(expectKind((await sendOne(flaky)).out, 'transient')).toMatchObject({ phase: 'auth' });
    expect(emu.requests).toHaveLength(0);
  });

  it('429 with Retry-After: transient with that delay, nothing sent', async () => {
    const { t } = transport();
    emu.faults.inject('messages.send', { kind: 'respond', ...gmailErrors.tooManyConcurrent(7) });
    const { out, m } = await sendOne(t);
    const tr = expectKind(out, 'transient');
    expect(tr.retryAfterMs).toBe(7_000);
    expect(tr.responseCode).toBe(429);
    expect(notSent(out)).toBe(true);
    expect(emu.mailbox(REP).byMessageId(m.messageId)).toHaveLength(0);
  });

  it('429 of the daily sending cap: the wait comes from "Retry after <time>" in the message', async () => {
    const { t } = transport();
    emu.faults.inject('messages.send', { kind: 'respond', ...gmailErrors.sendingLimit(new Date(T0 + 3 * 3_600_000)) });
    expect(expectKind((await sendOne(t)).out, 'transient').retryAfterMs).toBe(3 * 3_600_000);
  });

  it('403 rate limits are transient; 403 refusals of the grant are auth_failed', async () => {
    const { t } = transport();
    emu.faults.inject('messages.send', { kind: 'respond', ...gmailErrors.userRateLimitExceeded() });
    emu.faults.inject('messages.send', { kind: 'respond', ...gmailErrors.rateLimitExceeded403(), headers: { 'retry-after': '30' } });
    emu.faults.inject('messages.send', { kind: 'respond', ...gmailErrors.dailyLimitExceeded() });
    emu.faults.inject('messages.send', { kind: 'respond', ...gmailErrors.insufficientPermissions() });
    emu.faults.inject('messages.send', { kind: 'respond', ...gmailErrors.domainPolicy() });
    expect(expectKind((await sendOne(t)).out, 'transient')).toMatchObject({ responseCode: 403, retryAfterMs: null });
    expect(expectKind((await sendOne(t)).out, 'transient')).toMatchObject({ responseCode: 403, retryAfterMs: 30_000 });
    expectKind((await sendOne(t)).out, 'transient');
    expect(expectKind((await sendOne(t)).out, 'auth_failed').reason).toContain('insufficientPermissions');
    expect(expectKind((await sendOne(t)).out, 'auth_failed').reason).toContain('domainPolicy');
    expect(emu.faults.pending()).toBe(0);
    expect(emu.mailbox(REP).messages.size).toBe(0);
  });

  it('500 and 503 are transient; 502 and 504 (a front end lost the answer) are ambiguous', async () => {
    const { t } = transport();
    for (const code of [500, 503, 502, 504] as const) emu.faults.inject('messages.send', { kind: 'respond', ...gmailErrors.backendError(code) });
    expect(expectKind((await sendOne(t)).out, 'transient').responseCode).toBe(500);
    expect(expectKind((await sendOne(t)).out, 'transient').responseCode).toBe(503);
    expect(expectKind((await sendOne(t)).out, 'ambiguous').phase).toBe('http_response');
    expect(expectKind((await sendOne(t)).out, 'ambiguous').phase).toBe('http_response');
  });

  it('400 Invalid To header: a bounce of the one recipient (5.1.3); with several recipients, rejected', async () => {
    const { t } = transport();
    const one = await sendOne(t, { to: ['dana@localhost'] });
    const b = expectKind(one.out, 'bounce');
    expect(b.recipients).toEqual([
      { recipient: 'dana@localhost', responseCode: null, enhancedStatus: '5.1.3', diagnostic: expect.stringContaining('Invalid To header') },
    ]);
    const two = await sendOne(t, { to: [PROSPECT], cc: ['x@localhost'] });
    expect(expectKind(two.out, 'rejected')).toMatchObject({ responseCode: 400, reason: expect.stringContaining('Invalid Cc header') });
    expect(emu.mailbox(REP).messages.size).toBe(0);
  });

  it('rejected: another 400, and a message too large for the JSON send (refused before any request)', async () => {
    const { t } = transport();
    emu.faults.inject('messages.send', { kind: 'respond', ...gmailErrors.badRequest('Invalid message') });
    expect(expectKind((await sendOne(t)).out, 'rejected').responseCode).toBe(400);
    const before = emu.requests.length;
    const big = await sendOne(t, { body: 'x'.repeat(4_000_000) });
    expect(expectKind(big.out, 'rejected')).toMatchObject({ phase: 'http_request', responseCode: null });
    expect(emu.requests.length).toBe(before);
  });

  it('connection dropped after the message was stored: ambiguous, findSent finds it, no resend', async () => {
    const { t } = transport();
    emu.faults.inject('messages.send', { kind: 'drop', after: 'processing' });
    const { out, m } = await sendOne(t);
    expect(expectKind(out, 'ambiguous')).toMatchObject({ phase: 'http_response', sentCopy: 'server' });
    const found = await t.findSent(m.messageId);
    expect(found).toMatchObject({ status: 'found', sentAt: T0 });
    // What the sender does with 'found': record it sent, never send again. One copy exists.
    expect(emu.mailbox(REP).byMessageId(m.messageId)).toHaveLength(1);
    expect(emu.requests.filter((r) => r.route === 'messages.send')).toHaveLength(1);
  });

  it('connection dropped before Gmail acted: ambiguous too (the client cannot tell), and findSent says not_found', async () => {
    const { t } = transport();
    emu.faults.inject('messages.send', { kind: 'drop', after: 'receiving' });
    const { out, m } = await sendOne(t);
    expectKind(out, 'ambiguous');
    expect(await t.findSent(m.messageId)).toEqual({ status: 'not_found' });
  });

  it('no answer within the deadline after the body was sent: ambiguous; an abort likewise', async () => {
    const { t } = transport({ timeoutMs: 300 });
    emu.faults.inject('messages.send', { kind: 'hang', after: 'processing' });
    const { out, m } = await sendOne(t);
    expect(expectKind(out, 'ambiguous').reason).toContain('timeout');
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'found' });

    emu.faults.inject('messages.send', { kind: 'hang', after: 'receiving' });
    const ac = new AbortController();
    const { raw, m: m2 } = msg();
    const pending = t.send(raw, { from: REP, to: [PROSPECT] }, { messageId: m2.messageId, signal: ac.signal });
    await until(() => emu.requests.some((r) => r.outcome === 'hung' && r.url.endsWith('/send') && r !== emu.requests[0]));
    ac.abort();
    expect(expectKind(await pending, 'ambiguous').reason).toContain('aborted');
  });

  it('nobody listening: transient at connect; findSent unavailable', async () => {
    const { t } = transport();
    await emu.close();
    const { out, m } = await sendOne(t);
    expect(expectKind(out, 'transient')).toMatchObject({ phase: 'connect', responseCode: null });
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('ECONNREFUSED') });
  });

  it('findSent: a provider error is unavailable, never not_found', async () => {
    const { t } = transport();
    const { m } = await sendOne(t);
    emu.faults.inject('messages.list', { kind: 'respond', ...gmailErrors.backendError(503) });
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('503') });
    emu.faults.inject('messages.get', { kind: 'respond', ...gmailErrors.tooManyConcurrent() });
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('429') });
    emu.faults.inject('messages.list', { kind: 'respond', status: 200, body: { messages: 'garbage' } });
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('not an array') });
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'found' });
  });

  it('a 200 whose body is unreadable is still an acceptance', async () => {
    const { t } = transport();
    emu.faults.inject('messages.send', { kind: 'respond', status: 200, body: 'not json' });
    expect(expectKind((await sendOne(t)).out, 'accepted')).toMatchObject({ providerId: null, threadId: null });
  });

  it('programming errors throw: wrong Message-ID, recipients that differ from the envelope, no recipients', async () => {
    const { t } = transport();
    const { raw, m } = msg();
    await expect(t.send(raw, { from: REP, to: [PROSPECT] }, { messageId: '<other@acme.test>' })).rejects.toSatisfy((e) => isCadenzaError(e, 'INVALID_INPUT'));
    await expect(t.send(raw, { from: REP, to: ['someone@else.test'] }, { messageId: m.messageId })).rejects.toThrow(/envelope/);
    await expect(t.send(raw, { from: REP, to: [] }, { messageId: m.messageId })).rejects.toThrow(/without recipients/);
    expect(emu.requests).toHaveLength(0);
  });
});

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error('condition not met');
}

describe('Gmail mailbox last look (recentMailFrom) against the emulator', () => {
  it('finds mail from the lead after the instant, in the inbox and in spam, by the id the sync keys it with; nothing from others or before', async () => {
    const { t } = transport();
    const reply = (id: string, from = PROSPECT) => rawMessage({ from: `Dana <${from}>`, to: [REP], subject: 'Re: Quick question', messageId: id });
    const inbox = await emu.deliver(REP, reply('<r1@prospect.test>'), { internalDate: T0 + 5_000 });
    const spam = await emu.deliver(REP, reply('<r2@prospect.test>'), { spam: true, internalDate: T0 + 6_000 });
    await emu.deliver(REP, reply('<r3@else.test>', 'someone@else.test'), { internalDate: T0 + 7_000 });
    await emu.deliver(REP, reply('<r0@prospect.test>'), { internalDate: T0 - 120_000 });
    const r = await t.recentMailFrom({ from: PROSPECT, threadedOn: ['<step-1@acme.test>'], since: T0 });
    expect(r.status).toBe('ok');
    expect(r.status === 'ok' && r.messages.map((m) => m.key).sort()).toEqual([inbox.id, spam.id].sort());
    expect(await t.recentMailFrom({ from: PROSPECT, threadedOn: [], since: T0 + 10_000 })).toEqual({ status: 'ok', messages: [] });
  });

  it('a provider failure is unavailable, never "nothing there"', async () => {
    const { t } = transport();
    emu.faults.inject('messages.list', { kind: 'respond', ...gmailErrors.backendError(503) });
    const r = await t.recentMailFrom({ from: PROSPECT, threadedOn: [], since: T0 });
    expect(r.status).toBe('unavailable');
  });
});
