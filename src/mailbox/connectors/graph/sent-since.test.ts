import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../../common/clock.ts';
import { SimClock } from '../../../sim/sim-clock.ts';
import { graphErrors } from '../../../sim/emulators/graph/errors.ts';
import { startGraphEmulator, type GraphEmulator } from '../../../sim/emulators/graph/emulator.ts';
import { rawMessage } from '../../../sim/emulators/messages.ts';
import { parseMessage } from '../../../sim/emulators/mime.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../../test/leaks.ts';
import type { SentFolderCopy } from '../outcomes.ts';
import { GraphTransport } from './graph-transport.ts';

/**
 * GraphTransport.sentSince (sent-since.ts) against the Graph emulator: Sent Items filtered on
 * sentDateTime, $top pages followed by @odata.nextLink; a submission still in flight (a draft)
 * not listed; an item without internetMessageId counted and left out; 429 with a decimal
 * Retry-After waited out, a longer one ending the listing as unavailable.
 */
const REP = 'rep@contoso.test';
const PROSPECT = 'lee@prospect.test';
const T0 = Date.UTC(2026, 2, 2, 14, 0, 0);

let emu: GraphEmulator;
/** The emulator's clock: a send's sentDateTime is the time the test sets. */
let sim: SimClock;
let handles: HandleCounts;
/** Real timers for the transport (HTTP deadline, retry waits, recorded), "now" from the emulator's clock. */
let waits: number[] = [];
const clock: Clock = {
  ...systemClock,
  now: () => sim.now(),
  setTimer: (ms, fn) => (waits.push(ms), systemClock.setTimer(ms, fn)),
};
const fastRetry = { maxAttempts: 3, baseDelayMs: 10, maxWaitMs: 2_000 };

beforeEach(async () => {
  handles = handleCounts();
  sim = new SimClock(T0);
  waits = [];
  emu = await startGraphEmulator({ users: [REP, PROSPECT], clock: sim });
});
afterEach(async () => {
  await emu.close();
  await expectNoLeaks(handles);
});

const transport = (sentPageSize = 100) => new GraphTransport({ baseUrl: emu.baseUrl, tokens: emu.tokenSource(REP), clock, timeoutMs: 5_000, retry: fastRetry, sentPageSize });

async function send(t: GraphTransport, n: number, at: number) {
  sim.advanceTo(at);
  const messageId = `<step-${n}@contoso.test>`;
  const out = await t.send(rawMessage({ from: REP, to: [PROSPECT], subject: `Step ${n}`, messageId }), { from: REP, to: [PROSPECT] }, { messageId });
  expect(out.kind).toBe('accepted');
}

async function list(t: GraphTransport, since: number) {
  const pages: SentFolderCopy[][] = [];
  const result = await t.sentSince(since, async (p) => void pages.push(p));
  return { result, pages, ids: pages.flat().map((c) => c.messageId) };
}

const listUrls = () => emu.requests.filter((r) => r.route === 'messages.list').map((r) => decodeURIComponent(r.url));

describe('Graph sentSince against the emulator', () => {
  it('pages through Sent Items by @odata.nextLink, each page handled before the next is asked for', async () => {
    const t = transport(3);
    for (let n = 1; n <= 7; n++) await send(t, n, T0 + n * 60_000);
    const seen: number[] = [];
    const pages: SentFolderCopy[][] = [];
    const r = await t.sentSince(T0, async (p) => {
      seen.push(listUrls().length);
      pages.push(p);
    });
    expect(r).toEqual({ status: 'ok', copies: 7, withoutMessageId: 0 });
    expect(seen).toEqual([1, 2, 3]);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((c) => c.messageId).sort()).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => `<step-${n}@contoso.test>`));
    expect(pages.flat().find((c) => c.messageId === '<step-2@contoso.test>')).toEqual({
      messageId: '<step-2@contoso.test>',
      sentAt: T0 + 2 * 60_000,
      to: [PROSPECT],
      subject: 'Step 2',
      inReplyTo: null,
      pending: false,
    });
    const urls = listUrls();
    expect(urls[0]).toContain('/me/mailFolders/sentitems/messages?');
    expect(urls[0]).toContain('$filter=sentDateTime ge 2026-03-02T14:00:00Z');
    // The next pages are the links as Graph gave them: the filter rides along.
    expect(urls[2]).toContain('$skip=6');
    expect(urls[2]).toContain('$filter=sentDateTime ge 2026-03-02T14:00:00Z');
  });

  it('keeps the second of the instant, not before it; a submission still in flight and received mail are not listed', async () => {
    const t = transport();
    const since = T0 + 10_500;
    await send(t, 1, T0 + 9_999); // the second before
    await send(t, 2, T0 + 10_000); // the instant's own second (sentDateTime has whole seconds)
    await send(t, 3, T0 + 11_000);
    emu.setSentItemsDelay(60_000);
    await send(t, 4, T0 + 12_000); // 202, still a draft in Drafts
    await emu.deliver(REP, rawMessage({ from: PROSPECT, to: [REP], subject: 'Re: Step 1', messageId: '<reply@prospect.test>' }));
    const { result, ids } = await list(t, since);
    expect(result).toEqual({ status: 'ok', copies: 2, withoutMessageId: 0 });
    expect(ids.sort()).toEqual(['<step-2@contoso.test>', '<step-3@contoso.test>']);
    sim.advance(60_000); // the submission completes: in Sent Items now
    expect((await list(t, since)).ids.sort()).toEqual(['<step-2@contoso.test>', '<step-3@contoso.test>', '<step-4@contoso.test>']);
  });

  it('an item without internetMessageId is counted and left out', async () => {
    const t = transport();
    await send(t, 1, T0 + 1_000);
    const raw = Buffer.from([`From: ${REP}`, `To: ${PROSPECT}`, 'Subject: no id', '', 'hi', ''].join('\r\n'));
    const at = T0 + 2_000;
    emu.mailbox(REP).add({ folder: 'sentitems', raw, parsed: await parseMessage(raw), internetMessageId: null, isDraft: false, isRead: true, createdAt: at, sentAt: at, receivedAt: at, submitAt: null });
    const { result, ids } = await list(t, T0);
    expect(result).toEqual({ status: 'ok', copies: 1, withoutMessageId: 1 });
    expect(ids).toEqual(['<step-1@contoso.test>']);
  });

  it('429 with a decimal Retry-After and 503 are waited out; an hour to wait ends it unavailable with the pages before it handed over', async () => {
    const t = transport(2);
    for (let n = 1; n <= 4; n++) await send(t, n, T0 + n * 1_000);
    emu.faults.inject('messages.list', { kind: 'respond', ...graphErrors.tooManyRequests('0.25') });
    emu.faults.inject('messages.list', { kind: 'respond', ...graphErrors.serviceUnavailable('1') });
    const ok = await list(t, T0);
    expect(ok.result).toEqual({ status: 'ok', copies: 4, withoutMessageId: 0 });
    expect(waits).toContain(250);
    expect(waits).toContain(1_000);
    expect(emu.faults.pending()).toBe(0);

    let pages = 0;
    const r = await t.sentSince(T0, async () => {
      if (++pages === 1) emu.faults.inject('messages.list', { kind: 'respond', ...graphErrors.tooManyRequests('3600') });
    });
    expect(r).toMatchObject({ status: 'unavailable', copies: 2 });
    expect(r.status === 'unavailable' && r.reason).toMatch(/429 TooManyRequests/);
  });

  it('a nextLink to another host is not followed (the token would go with it)', async () => {
    const t = transport();
    emu.faults.inject('messages.list', { kind: 'respond', status: 200, body: { value: [], '@odata.nextLink': 'https://elsewhere.test/v1.0/me/messages?$skip=1' } });
    const r = await list(t, T0);
    expect(r.result).toMatchObject({ status: 'unavailable', copies: 0 });
    expect(r.result.status === 'unavailable' && r.result.reason).toMatch(/another host/);
  });
});
