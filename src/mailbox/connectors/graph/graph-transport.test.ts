import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../../common/clock.ts';
import { isCadenzaError } from '../../../common/errors.ts';
import { SimClock } from '../../../sim/sim-clock.ts';
import { graphErrors } from '../../../sim/emulators/graph/errors.ts';
import { startGraphEmulator, type GraphEmulator } from '../../../sim/emulators/graph/emulator.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../../test/leaks.ts';
import { rawMessage, type TestMessage } from '../../../sim/emulators/messages.ts';
import { GraphTransport } from './graph-transport.ts';
import { notSent, type SendOutcome } from '../outcomes.ts';

const REP = 'rep@contoso.test';
const PROSPECT = 'lee@prospect.test';
const T0 = Date.UTC(2026, 2, 2, 14, 0, 0);

/** Wall-clock timers (for the HTTP deadline) with a fixed "now" (for Retry-After arithmetic). */
const fixedNow: Clock = { ...systemClock, now: () => T0 };

let emu: GraphEmulator;
/** The emulator's clock: moves only when a test says, so the Sent Items delay is exact. */
let sim: SimClock;
let seq = 0;
let handles: HandleCounts;

beforeEach(async () => {
  handles = handleCounts();
  sim = new SimClock(T0);
  emu = await startGraphEmulator({ users: [REP, PROSPECT], clock: sim });
});
afterEach(async () => {
  await emu.close();
  await expectNoLeaks(handles);
});

function msg(over: Partial<TestMessage> = {}): { raw: Buffer; m: TestMessage } {
  const m: TestMessage = { from: `Rep <${REP}>`, to: [PROSPECT], subject: 'Quick question', messageId: `<step-${++seq}@contoso.test>`, ...over };
  return { raw: rawMessage(m), m };
}

function transport(over: Partial<ConstructorParameters<typeof GraphTransport>[0]> = {}) {
  const tokens = emu.tokenSource(REP);
  return { t: new GraphTransport({ baseUrl: emu.baseUrl, tokens, clock: fixedNow, timeoutMs: 5_000, ...over }), tokens };
}

async function sendOne(t: GraphTransport, over: Partial<TestMessage> = {}) {
  const { raw, m } = msg(over);
  const out = await t.send(raw, { from: REP, to: [...m.to, ...(m.cc ?? [])] }, { messageId: m.messageId });
  return { out, raw, m };
}

function expectKind<K extends SendOutcome['kind']>(o: SendOutcome, kind: K): Extract<SendOutcome, { kind: K }> {
  expect(o.kind, JSON.stringify(o)).toBe(kind);
  return o as Extract<SendOutcome, { kind: K }>;
}

describe('Graph transport against the emulator', () => {
  it('202 is accepted with confirm: sent_folder; the Sent copy shows after the delay and findSent confirms it', async () => {
    emu.setSentItemsDelay(90_000);
    const { t } = transport();
    const { out, raw, m } = await sendOne(t);
    const a = expectKind(out, 'accepted');
    expect(a).toMatchObject({ response: '202 Accepted', providerId: null, confirm: 'sent_folder', sentCopy: 'server' });
    // Submission in flight: only a draft exists, which proves the 202 (handed over), not the send: pending.
    const draft = emu.mailbox(REP).byInternetMessageId(m.messageId);
    expect(draft.map((x) => [x.folder, x.isDraft])).toEqual([['drafts', true]]);
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'found', sentAt: null, pending: true });

    sim.advance(89_999);
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'found', pending: true });
    sim.advance(1);
    const found = await t.findSent(m.messageId);
    expect(found).toMatchObject({ status: 'found', sentAt: T0 + 90_000 });
    const copy = emu.mailbox(REP).byInternetMessageId(m.messageId);
    expect(copy).toHaveLength(1);
    expect(copy[0]!.folder).toBe('sentitems');
    // Our bytes went out as composed, and the id found is the immutable one (stable across the move).
    expect(copy[0]!.raw.equals(raw)).toBe(true);
    expect(found.status === 'found' && found.providerId).toBe(copy[0]!.immutableId);
    expect(found.status === 'found' && found.threadId).toBe(copy[0]!.conversationId);
    expect(emu.mailbox(PROSPECT).byInternetMessageId(m.messageId)).toHaveLength(1);
  });

  it('a follow-up with In-Reply-To/References shares the conversation', async () => {
    const { t } = transport();
    const first = await sendOne(t);
    const reply = rawMessage({
      from: PROSPECT,
      to: [REP],
      subject: 'Re: Quick question',
      messageId: '<r1@prospect.test>',
      inReplyTo: first.m.messageId,
      references: [first.m.messageId],
    });
    await emu.deliver(REP, reply);
    const follow = await sendOne(t, { subject: 'Re: Quick question', inReplyTo: '<r1@prospect.test>', references: [first.m.messageId, '<r1@prospect.test>'] });
    expectKind(follow.out, 'accepted');
    const a = await t.findSent(first.m.messageId);
    const b = await t.findSent(follow.m.messageId);
    expect(a.status === 'found' && b.status === 'found' && a.threadId === b.threadId && a.threadId !== null).toBe(true);
    const unrelated = await sendOne(t, { subject: 'Another topic' });
    expectKind(unrelated.out, 'accepted');
    const c = await t.findSent(unrelated.m.messageId);
    expect(c.status === 'found' && c.threadId).not.toBe(a.status === 'found' && a.threadId);
  });

  it('a 202 whose submission never completes stays a pending draft (the outbox records it possibly sent after the grace period, never sends it again)', async () => {
    const { t } = transport();
    emu.loseNextSend();
    const { out, m } = await sendOne(t);
    expect(expectKind(out, 'accepted').confirm).toBe('sent_folder');
    sim.advance(3_600_000);
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'found', pending: true });
  });

  it('works through /users/{upn} as well as /me; another user is refused (auth_failed)', async () => {
    const { t } = transport({ user: REP });
    expectKind((await sendOne(t)).out, 'accepted');
    expect(emu.requests.at(-1)!.url).toContain(`/users/${encodeURIComponent(REP)}/sendMail`);
    const { t: other } = transport({ user: PROSPECT });
    expect(expectKind((await sendOne(other)).out, 'auth_failed')).toMatchObject({ responseCode: 403, reason: expect.stringContaining('ErrorAccessDenied') });
  });

  it('401: the token is refreshed once and the send goes through; refused again: auth_failed', async () => {
    const { t, tokens } = transport();
    emu.tokens.expire(tokens.current);
    expectKind((await sendOne(t)).out, 'accepted');
    expect(tokens.calls).toEqual([{ forceRefresh: false }, { forceRefresh: true }]);

    const stuck = emu.tokenSource(REP, { onRefresh: 'same' });
    emu.tokens.expire(stuck.current);
    const t2 = new GraphTransport({ baseUrl: emu.baseUrl, tokens: stuck });
    const { out, m } = await sendOne(t2);
    expect(expectKind(out, 'auth_failed')).toMatchObject({ responseCode: 401, reason: expect.stringContaining('InvalidAuthenticationToken') });
    expect(emu.mailbox(REP).byInternetMessageId(m.messageId)).toHaveLength(0);
  });

  it('429 with a decimal Retry-After: transient with that delay; 503 likewise; nothing sent', async () => {
    const { t } = transport();
    emu.faults.inject('sendMail', { kind: 'respond', ...graphErrors.tooManyRequests('2.128') });
    emu.faults.inject('sendMail', { kind: 'respond', ...graphErrors.applicationThrottled(null) });
    emu.faults.inject('sendMail', { kind: 'respond', ...graphErrors.serviceUnavailable('10') });
    emu.faults.inject('sendMail', { kind: 'respond', ...graphErrors.internalServerError() });
    const a = await sendOne(t);
    expect(expectKind(a.out, 'transient')).toMatchObject({ responseCode: 429, retryAfterMs: 2_128 });
    expect(notSent(a.out)).toBe(true);
    expect(expectKind((await sendOne(t)).out, 'transient')).toMatchObject({ responseCode: 429, retryAfterMs: null });
    expect(expectKind((await sendOne(t)).out, 'transient')).toMatchObject({ responseCode: 503, retryAfterMs: 10_000 });
    expect(expectKind((await sendOne(t)).out, 'transient')).toMatchObject({ responseCode: 500 });
    expect(emu.mailbox(REP).messages).toHaveLength(0);
  });

  it('502 and 504 are ambiguous', async () => {
    const { t } = transport();
    emu.faults.inject('sendMail', { kind: 'respond', ...graphErrors.badGateway() });
    emu.faults.inject('sendMail', { kind: 'respond', ...graphErrors.gatewayTimeout() });
    expectKind((await sendOne(t)).out, 'ambiguous');
    expectKind((await sendOne(t)).out, 'ambiguous');
  });

  it('400 ErrorInvalidRecipients: a bounce of the one recipient; with several, rejected', async () => {
    const { t } = transport();
    const b = expectKind((await sendOne(t, { to: ['lee@localhost'] })).out, 'bounce');
    expect(b.recipients).toEqual([
      { recipient: 'lee@localhost', responseCode: null, enhancedStatus: '5.1.3', diagnostic: expect.stringContaining("Recipient 'lee@localhost'") },
    ]);
    expect(expectKind((await sendOne(t, { cc: ['x@localhost'] })).out, 'rejected')).toMatchObject({ responseCode: 400 });
  });

  it('rejected: bad MIME (documented 400), a mailbox-level 403 is auth_failed, and an oversized message is refused before sending', async () => {
    const { t } = transport();
    emu.faults.inject('sendMail', { kind: 'respond', ...graphErrors.mimeInvalidBase64() });
    expect(expectKind((await sendOne(t)).out, 'rejected').reason).toContain('ErrorMimeContentInvalidBase64String');
    emu.faults.inject('sendMail', { kind: 'respond', ...graphErrors.messageSubmissionBlocked() });
    expectKind((await sendOne(t)).out, 'auth_failed');
    emu.faults.inject('sendMail', { kind: 'respond', ...graphErrors.mailboxNotEnabled() });
    expect(expectKind((await sendOne(t)).out, 'auth_failed').responseCode).toBe(404);
    const before = emu.requests.length;
    expect(expectKind((await sendOne(t, { body: 'y'.repeat(3_000_000) })).out, 'rejected').phase).toBe('http_request');
    expect(emu.requests.length).toBe(before);
  });

  it('connection dropped after the 202 was decided: ambiguous, findSent finds it once submitted, no resend', async () => {
    emu.setSentItemsDelay(30_000);
    const { t } = transport();
    emu.faults.inject('sendMail', { kind: 'drop', after: 'processing' });
    const { out, m } = await sendOne(t);
    expect(expectKind(out, 'ambiguous')).toMatchObject({ phase: 'http_response', sentCopy: 'server' });
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'found', pending: true }); // still a draft: handed over, not yet sent
    sim.advance(30_000);
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'found', sentAt: T0 + 30_000 });
    expect(emu.mailbox(REP).byInternetMessageId(m.messageId)).toHaveLength(1);
    expect(emu.requests.filter((r) => r.route === 'sendMail')).toHaveLength(1);
  });

  it('no answer within the deadline: ambiguous; nobody listening: transient at connect, findSent unavailable', async () => {
    const { t } = transport({ timeoutMs: 300 });
    emu.faults.inject('sendMail', { kind: 'hang', after: 'receiving' });
    const { out, m } = await sendOne(t);
    expect(expectKind(out, 'ambiguous').reason).toContain('timeout');
    expect(await t.findSent(m.messageId)).toEqual({ status: 'not_found' });
    await emu.close();
    expect(expectKind((await sendOne(t)).out, 'transient').phase).toBe('connect');
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'unavailable' });
  });

  it('findSent: provider errors are unavailable; the filter literal survives a quote in the Message-ID', async () => {
    const { t } = transport();
    const { m } = await sendOne(t, { messageId: "<o'brien.1@contoso.test>" });
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'found' });
    expect(await t.findSent("<o'brien.2@contoso.test>")).toEqual({ status: 'not_found' });
    emu.faults.inject('messages.list', { kind: 'respond', ...graphErrors.tooManyRequests('1') });
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('TooManyRequests') });
    emu.faults.inject('messages.list', { kind: 'respond', status: 200, body: { nothing: true } });
    expect(await t.findSent(m.messageId)).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('value array') });
  });

  it('a token supplier that fails: auth_failed, or transient when it says so; nothing reaches Graph', async () => {
    const dead = new GraphTransport({ baseUrl: emu.baseUrl, tokens: () => Promise.reject(new Error('AADSTS70008 invalid_grant')) });
    expectKind((await sendOne(dead)).out, 'auth_failed');
    const flaky = new GraphTransport({ baseUrl: emu.baseUrl, tokens: () => Promise.reject(Object.assign(new Error('ETIMEDOUT'), { transient: true })) });
    expectKind((await sendOne(flaky)).out, 'transient');
    expect(emu.requests).toHaveLength(0);
  });

  it('programming errors throw before anything is sent', async () => {
    const { t } = transport();
    const { raw, m } = msg();
    await expect(t.send(raw, { from: REP, to: [PROSPECT] }, { messageId: '<x@y>' })).rejects.toSatisfy((e) => isCadenzaError(e, 'INVALID_INPUT'));
    await expect(t.send(raw, { from: REP, to: [PROSPECT, 'bcc@else.test'] }, { messageId: m.messageId })).rejects.toThrow(/envelope/);
    await t.close();
    await expect(t.send(raw, { from: REP, to: [PROSPECT] }, { messageId: m.messageId })).rejects.toThrow(/closed/);
    expect(emu.requests).toHaveLength(0);
  });
});

describe('Graph mailbox last look (recentMailFrom) against the emulator', () => {
  it('finds mail from the lead received since the instant, Inbox and Junk Email, by immutable id as the sync keys it; nothing from others or before', async () => {
    const { t } = transport();
    const reply = (id: string, from = PROSPECT) => rawMessage({ from: `Lee <${from}>`, to: [REP], subject: 'Re: Quick question', messageId: id });
    const inbox = await emu.deliver(REP, reply('<r1@prospect.test>', 'Lee@Prospect.test'), { receivedAt: T0 + 5_000 });
    const junk = await emu.deliver(REP, reply('<r2@prospect.test>'), { folder: 'junkemail', receivedAt: T0 + 6_000 });
    await emu.deliver(REP, reply('<r3@else.test>', 'someone@else.test'), { receivedAt: T0 + 7_000 });
    await emu.deliver(REP, reply('<r0@prospect.test>'), { receivedAt: T0 - 120_000 });
    const r = await t.recentMailFrom({ from: PROSPECT, threadedOn: [], since: T0 });
    expect(r.status).toBe('ok');
    const got = r.status === 'ok' ? r.messages : [];
    expect(got.map((m) => m.key).sort()).toEqual([inbox.immutableId, junk.immutableId].sort());
    expect(got.map((m) => m.messageId).sort()).toEqual(['<r1@prospect.test>', '<r2@prospect.test>']);
    expect(await t.recentMailFrom({ from: PROSPECT, threadedOn: [], since: T0 + 10_000 })).toEqual({ status: 'ok', messages: [] });
  });

  it('a provider failure is unavailable, never "nothing there"', async () => {
    const { t } = transport();
    emu.faults.inject('messages.list', { kind: 'respond', ...graphErrors.badGateway() });
    expect((await t.recentMailFrom({ from: PROSPECT, threadedOn: [], since: T0 })).status).toBe('unavailable');
  });
});
