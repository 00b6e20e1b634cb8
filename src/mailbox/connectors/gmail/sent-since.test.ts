import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../../common/clock.ts';
import { gmailErrors } from '../../../sim/emulators/gmail/errors.ts';
import { startGmailEmulator, type GmailEmulator } from '../../../sim/emulators/gmail/emulator.ts';
import { rawMessage } from '../../../sim/emulators/messages.ts';
import { parseMessage } from '../../../sim/emulators/mime.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../../test/leaks.ts';
import type { SentFolderCopy } from '../outcomes.ts';
import { GmailTransport } from './gmail-transport.ts';

/**
 * GmailTransport.sentSince (sent-since.ts) against the Gmail emulator: users.messages.list with
 * labelIds=SENT and `after:`, page by page, each copy read with format=metadata; the instant
 * itself kept on internalDate; a copy without a Message-ID counted and left out; Retry-After
 * waited out, a longer one ending the listing as unavailable with what was handed over so far.
 */
const REP = 'rep@acme.test';
const PROSPECT = 'dana@prospect.test';
const T0 = Date.UTC(2026, 2, 2, 14, 0, 0);

let emu: GmailEmulator;
let handles: HandleCounts;
let now = T0;
/** Real timers (the HTTP deadline, the retry waits, which it records) and a "now" the test moves. */
let waits: number[] = [];
const clock: Clock = {
  ...systemClock,
  now: () => now,
  setTimer: (ms, fn) => (waits.push(ms), systemClock.setTimer(ms, fn)),
};
const fastRetry = { maxAttempts: 3, baseDelayMs: 10, maxWaitMs: 2_000 };

beforeEach(async () => {
  handles = handleCounts();
  now = T0;
  waits = [];
  emu = await startGmailEmulator({ users: [REP, PROSPECT], clock });
});
afterEach(async () => {
  await emu.close();
  await expectNoLeaks(handles);
});

const transport = (sentPageSize = 100) => new GmailTransport({ baseUrl: emu.baseUrl, tokens: emu.tokenSource(REP), clock, timeoutMs: 5_000, retry: fastRetry, sentPageSize });

async function send(t: GmailTransport, n: number, at: number) {
  now = at;
  const messageId = `<step-${n}@acme.test>`;
  const raw = rawMessage({ from: REP, to: [PROSPECT], subject: `Step ${n}`, messageId, ...(n > 1 ? { inReplyTo: '<step-1@acme.test>' } : {}) });
  const out = await t.send(raw, { from: REP, to: [PROSPECT] }, { messageId });
  expect(out.kind).toBe('accepted');
}

/** Files a message straight into the mailbox (another client's copy), dated `at`. */
async function file(raw: Buffer, labels: string[], at: number) {
  emu.mailbox(REP).insert(raw, await parseMessage(raw), labels, null, at);
}

async function list(t: GmailTransport, since: number) {
  const pages: SentFolderCopy[][] = [];
  const result = await t.sentSince(since, async (p) => void pages.push(p));
  return { result, pages, ids: pages.flat().map((c) => c.messageId) };
}

const listCalls = () => emu.requests.filter((r) => r.route === 'messages.list').length;

describe('Gmail sentSince against the emulator', () => {
  it('pages through SENT (nextPageToken), each page handled before the next is asked for, oldest first within a page', async () => {
    const t = transport(3);
    for (let n = 1; n <= 7; n++) await send(t, n, T0 + n * 60_000);
    const seen: number[] = [];
    const pages: SentFolderCopy[][] = [];
    const r = await t.sentSince(T0, async (p) => {
      // The next list request waits for this handler: one page in memory at a time.
      seen.push(listCalls());
      pages.push(p);
    });
    expect(r).toEqual({ status: 'ok', copies: 7, withoutMessageId: 0 });
    expect(seen).toEqual([1, 2, 3]);
    expect(pages.map((p) => p.map((c) => c.messageId))).toEqual([
      ['<step-5@acme.test>', '<step-6@acme.test>', '<step-7@acme.test>'],
      ['<step-2@acme.test>', '<step-3@acme.test>', '<step-4@acme.test>'],
      ['<step-1@acme.test>'],
    ]);
    const step2 = pages[1]![0]!;
    expect(step2).toEqual({ messageId: '<step-2@acme.test>', sentAt: T0 + 2 * 60_000, to: [PROSPECT], subject: 'Step 2', inReplyTo: '<step-1@acme.test>', pending: false });
    const gets = emu.requests.filter((q) => q.route === 'messages.get');
    expect(gets).toHaveLength(7);
    expect(gets[0]!.url).toContain('format=metadata');
  });

  it('keeps what was sent at or after the instant itself (ms), and nothing that is not in SENT', async () => {
    const t = transport();
    const since = T0 + 500; // mid-second: Gmail's after: is whole seconds, internalDate is not
    await send(t, 1, since - 1);
    await send(t, 2, since);
    await send(t, 3, since + 1_000);
    // A reply from the prospect after the instant: INBOX, not SENT.
    await emu.deliver(REP, rawMessage({ from: PROSPECT, to: [REP], subject: 'Re: Step 1', messageId: '<reply@prospect.test>' }), { internalDate: since + 2_000 });
    // A sent copy the rep trashed still went out.
    await file(rawMessage({ from: REP, to: [PROSPECT], subject: 'Trashed', messageId: '<trashed@acme.test>' }), ['SENT', 'TRASH'], since + 3_000);
    const { result, ids } = await list(t, since);
    expect(result).toEqual({ status: 'ok', copies: 3, withoutMessageId: 0 });
    expect(ids.sort()).toEqual(['<step-2@acme.test>', '<step-3@acme.test>', '<trashed@acme.test>']);
    expect(emu.requests.find((q) => q.route === 'messages.list')!.url).toContain(`after%3A${Math.floor(since / 1000) - 1}`);
  });

  it('a copy without a Message-ID is counted and left out; an empty folder is an empty answer', async () => {
    const t = transport();
    expect(await list(t, T0)).toMatchObject({ result: { status: 'ok', copies: 0, withoutMessageId: 0 }, pages: [] });
    await send(t, 1, T0 + 1_000);
    const bare = Buffer.from([`From: ${REP}`, `To: ${PROSPECT}`, 'Subject: no id', '', 'hi', ''].join('\r\n'));
    await file(bare, ['SENT'], T0 + 2_000);
    const { result, ids } = await list(t, T0);
    expect(result).toEqual({ status: 'ok', copies: 1, withoutMessageId: 1 });
    expect(ids).toEqual(['<step-1@acme.test>']);
  });

  it('429 and 403 rate limits are waited out (Retry-After); a wait past the bound ends it unavailable, with the pages before it handed over', async () => {
    const t = transport(2);
    for (let n = 1; n <= 4; n++) await send(t, n, T0 + n * 1_000);
    emu.faults.inject('messages.list', { kind: 'respond', ...gmailErrors.tooManyConcurrent(1) });
    emu.faults.inject('messages.get', { kind: 'respond', ...gmailErrors.userRateLimitExceeded() });
    const ok = await list(t, T0);
    expect(ok.result).toEqual({ status: 'ok', copies: 4, withoutMessageId: 0 });
    expect(waits).toContain(1_000); // the Retry-After, to the millisecond
    expect(emu.faults.pending()).toBe(0);

    // The second page answers 429 with an hour to wait: more than the reader waits.
    emu.requests.length = 0;
    let lists = 0;
    const t2 = transport(2);
    const r = await t2.sentSince(T0, async () => {
      if (++lists === 1) emu.faults.inject('messages.list', { kind: 'respond', ...gmailErrors.tooManyConcurrent(3600) });
    });
    expect(r.status).toBe('unavailable');
    expect(r).toMatchObject({ copies: 2 });
    expect(r.status === 'unavailable' && r.reason).toMatch(/429 rateLimitExceeded/);
  });

  it("the handler's own failure is thrown, not reported as the mailbox's", async () => {
    const t = transport();
    await send(t, 1, T0 + 1_000);
    await expect(t.sentSince(T0, async () => Promise.reject(new Error('database gone')))).rejects.toThrow('database gone');
  });
});
