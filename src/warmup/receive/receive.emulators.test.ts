/**
 * The receiving side's folder actions through the Gmail and Graph connectors, against the
 * emulators (src/sim/emulators/): a warmup mail the provider put in SPAM / Junk Email is verified,
 * recorded as junk, moved to the inbox, flagged (Gmail STARRED + IMPORTANT, Graph flagged) and
 * read; an ordinary mail in the same folder is left there. The IMAP side runs on the mail bed
 * (receive.mail.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { createConnector } from '../../mailbox/connectors/registry.ts';
import { startGmailEmulator, type GmailEmulator } from '../../sim/emulators/gmail/emulator.ts';
import { startGraphEmulator, type GraphEmulator } from '../../sim/emulators/graph/emulator.ts';
import { rawMessage } from '../../sim/emulators/messages.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../test/leaks.ts';
import type { WarmupReceipt } from '../membership.ts';
import { warmupPoolKey, writeWarmup } from '../text/marker.ts';
import { receiveWarmup } from './receive.ts';

const KEY = warmupPoolKey(Buffer.alloc(32, 4), 'default');
const PEER = 'anna@peer.test';
const T = Date.UTC(2026, 11, 2, 10, 0);

function mails(rep: string) {
  const messageId = '<w-1@peer.test>';
  const t = writeWarmup(KEY, 'fr', { from: PEER, to: rep, messageId, fromName: 'Anna', toName: 'Rep' });
  return {
    warmup: rawMessage({ from: `Anna Berg <${PEER}>`, to: [`Rep One <${rep}>`], subject: t.subject!, messageId, body: t.body.replace(/\n/g, '\r\n') }),
    human: rawMessage({ from: `Anna Berg <${PEER}>`, to: [`Rep One <${rep}>`], subject: 'Hello', messageId: '<h-1@peer.test>' }),
  };
}

function deps(folders: Parameters<typeof receiveWarmup>[2]['folders'], receipts: WarmupReceipt[]) {
  return { key: KEY, pool: 'default', folders, record: async (r: WarmupReceipt) => void receipts.push(r), reply: { share: 0, minDelayMs: 0, maxDelayMs: 1, working: () => true }, random: seededRandom(1) };
}

let handles: HandleCounts;
beforeEach(() => {
  handles = handleCounts();
});

describe('Gmail', () => {
  const REP = 'rep@acme.test';
  let emu: GmailEmulator;
  beforeEach(async () => {
    emu = await startGmailEmulator({ users: [REP] });
  });
  afterEach(async () => {
    await emu.close();
    await expectNoLeaks(handles);
  });

  it('takes warmup mail out of SPAM, stars it, marks it important and read; human mail stays', async () => {
    const c = createConnector(
      { id: '0192f7a0-0000-7000-8000-0000000000e1', email: REP, provider: 'gmail', settings: {} },
      { clock: systemClock, random: seededRandom(1), credential: { kind: 'oauth', accessToken: 'unused' }, tokens: emu.tokenSource(REP), baseUrls: { gmail: emu.baseUrl }, httpTimeoutMs: 5_000 },
      ['folders'],
    );
    const m = mails(REP);
    const w = await emu.deliver(REP, m.warmup, { spam: true });
    const h = await emu.deliver(REP, m.human, { spam: true });
    const receipts: WarmupReceipt[] = [];
    const at = (id: string, raw: Buffer) => ({ key: id, folder: 'junk' as const, raw, threadId: null, receivedAt: T });
    expect(await receiveWarmup(at(h.id, m.human), { mailboxId: 'mb', address: REP }, deps(c, receipts), T)).toEqual({ warmup: false });
    const r = await receiveWarmup(at(w.id, m.warmup), { mailboxId: 'mb', address: REP }, deps(c, receipts), T);
    expect(r).toMatchObject({ warmup: true, language: 'fr', folder: 'junk', reply: null });
    expect(r.warmup && r.actions.map((a) => a.result.status)).toEqual(['done', 'done', 'done']);
    const labels = (id: string) => [...emu.store.mailbox(REP)!.messages.get(id)!.labelIds].sort();
    expect(labels(w.id)).toEqual(['IMPORTANT', 'INBOX', 'STARRED']);
    expect(labels(h.id)).toEqual(['SPAM', 'UNREAD']);
    expect(receipts).toMatchObject([{ messageId: '<w-1@peer.test>', folder: 'junk', senderAddress: PEER }]);
    await c.close();
  });
});

describe('Microsoft Graph', () => {
  const REP = 'rep@contoso.test';
  let emu: GraphEmulator;
  beforeEach(async () => {
    emu = await startGraphEmulator({ users: [REP] });
  });
  afterEach(async () => {
    await emu.close();
    await expectNoLeaks(handles);
  });

  it('moves warmup mail out of Junk Email under its immutable id, flags it and marks it read; human mail stays', async () => {
    const c = createConnector(
      { id: '0192f7a0-0000-7000-8000-0000000000e2', email: REP, provider: 'graph', settings: {} },
      { clock: systemClock, random: seededRandom(2), credential: { kind: 'oauth', accessToken: 'unused' }, tokens: emu.tokenSource(REP), baseUrls: { graph: emu.baseUrl }, httpTimeoutMs: 5_000 },
      ['folders'],
    );
    const m = mails(REP);
    const w = await emu.deliver(REP, m.warmup, { folder: 'junkemail' });
    const h = await emu.deliver(REP, m.human, { folder: 'junkemail' });
    const receipts: WarmupReceipt[] = [];
    const at = (key: string, raw: Buffer) => ({ key, folder: 'junk' as const, raw, threadId: null, receivedAt: T });
    expect(await receiveWarmup(at(h.immutableId, m.human), { mailboxId: 'mb', address: REP }, deps(c, receipts), T)).toEqual({ warmup: false });
    const r = await receiveWarmup(at(w.immutableId, m.warmup), { mailboxId: 'mb', address: REP }, deps(c, receipts), T);
    expect(r).toMatchObject({ warmup: true, folder: 'junk' });
    expect(r.warmup && r.actions.map((a) => a.result.status)).toEqual(['done', 'done', 'done']);
    expect(w.folder).toBe('inbox');
    expect(h.folder).toBe('junkemail');
    expect(receipts).toHaveLength(1);
    await c.close();
  });
});
