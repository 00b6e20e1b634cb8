import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../common/clock.ts';
import { seededRandom } from '../../../common/random.ts';
import { gmailErrors } from '../../../sim/emulators/gmail/errors.ts';
import { startGmailEmulator, type GmailEmulator } from '../../../sim/emulators/gmail/emulator.ts';
import { rawMessage } from '../../../sim/emulators/messages.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../../test/leaks.ts';
import { createConnector } from '../registry.ts';

/**
 * A Gmail mailbox's folder actions against the Gmail emulator, through the connector the registry
 * builds: the warmup feature's "not spam, important, read" on a message the sync found in SPAM,
 * keyed by its Gmail id, each one users.messages.modify.
 */
const REP = 'rep@acme.test';
const GMAIL_MODIFY = 'https://www.googleapis.com/auth/gmail.modify';

let emu: GmailEmulator;
let handles: HandleCounts;
let seq = 0;

beforeEach(async () => {
  handles = handleCounts();
  emu = await startGmailEmulator({ users: [REP] });
});
afterEach(async () => {
  await emu.close();
  await expectNoLeaks(handles);
});

function connector(tokens: (o: { forceRefresh: boolean }) => Promise<string> = emu.tokenSource(REP)) {
  return createConnector(
    { id: '0192f7a0-0000-7000-8000-000000000001', email: REP, provider: 'gmail', settings: {} },
    { clock: systemClock, random: seededRandom(1), credential: { kind: 'oauth', accessToken: 'unused' }, tokens, baseUrls: { gmail: emu.baseUrl }, httpTimeoutMs: 5_000 },
    ['folders'],
  );
}

async function spam(): Promise<string> {
  const m = await emu.deliver(REP, rawMessage({ from: 'Peer <peer@warmup.test>', to: [REP], subject: `Hello ${++seq}`, messageId: `<w-${seq}@warmup.test>` }), { spam: true });
  return m.id;
}

const labels = (id: string) => [...emu.store.mailbox(REP)!.messages.get(id)!.labelIds].sort();

describe('Gmail folder actions against the emulator', () => {
  it('moves a message out of SPAM into the inbox, stars it and marks it important, marks it read; each is idempotent and kept in the history', async () => {
    const c = connector();
    const id = await spam();
    expect(labels(id)).toEqual(['SPAM', 'UNREAD']);
    const historyBefore = emu.store.mailbox(REP)!.history.length;

    expect(await c.moveToInbox(id)).toEqual({ status: 'done', key: id });
    expect(labels(id)).toEqual(['INBOX', 'UNREAD']);
    expect(await c.flag(id)).toEqual({ status: 'done', key: id });
    expect(labels(id)).toEqual(['IMPORTANT', 'INBOX', 'STARRED', 'UNREAD']);
    expect(await c.markRead(id)).toEqual({ status: 'done', key: id });
    expect(labels(id)).toEqual(['IMPORTANT', 'INBOX', 'STARRED']);

    // The changes are history records (what the sync of another client would see).
    const changes = emu.store.mailbox(REP)!.history.slice(historyBefore).map((h) => h.change);
    expect(changes).toEqual([
      { type: 'labelAdded', messageId: id, labelIds: ['INBOX'] },
      { type: 'labelRemoved', messageId: id, labelIds: ['SPAM'] },
      { type: 'labelAdded', messageId: id, labelIds: ['STARRED', 'IMPORTANT'] },
      { type: 'labelRemoved', messageId: id, labelIds: ['UNREAD'] },
    ]);
    // Again: nothing changes, nothing is logged.
    expect(await c.moveToInbox(id)).toEqual({ status: 'done', key: id });
    expect(await c.markRead(id)).toEqual({ status: 'done', key: id });
    expect(emu.store.mailbox(REP)!.history.length).toBe(historyBefore + 4);
    expect(emu.requests.filter((r) => r.route === 'messages.modify').map((r) => r.outcome)).toEqual([200, 200, 200, 200, 200]);
    await c.close();
  });

  it('a message that is gone is not_found; a grant without gmail.modify is forbidden; rate limits and outages are unavailable', async () => {
    const id = await spam();
    expect(await connector().moveToInbox('18f00000000fffff')).toMatchObject({ status: 'not_found', reason: expect.stringMatching(/^Gmail API 404 /) });

    // A grant made when Cadenza asked for gmail.readonly and gmail.send only (before gmail.modify).
    const old = emu.tokens.issue(REP, ['https://www.googleapis.com/auth/gmail.readonly', 'https://www.googleapis.com/auth/gmail.send']);
    expect(await connector(async () => old).moveToInbox(id)).toMatchObject({ status: 'forbidden', reason: expect.stringMatching(/insufficientPermissions/) });
    expect(labels(id)).toEqual(['SPAM', 'UNREAD']);
    const granted = emu.tokens.issue(REP, ['https://www.googleapis.com/auth/gmail.send', GMAIL_MODIFY]);
    expect(await connector(async () => granted).moveToInbox(id)).toEqual({ status: 'done', key: id });

    emu.faults.inject('messages.modify', { kind: 'respond', ...gmailErrors.userRateLimitExceeded() });
    expect(await connector().flag(id)).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/userRateLimitExceeded/) });
    emu.faults.inject('messages.modify', { kind: 'respond', ...gmailErrors.backendError(503) });
    expect(await connector().flag(id)).toMatchObject({ status: 'unavailable' });
    // A dead grant: the token provider cannot refresh.
    const dead = async () => {
      throw new Error('invalid_grant');
    };
    expect(await connector(dead).markRead(id)).toMatchObject({ status: 'forbidden', reason: expect.stringMatching(/invalid_grant/) });
  });

  it('the emulator refuses a label it does not know, as Gmail does', async () => {
    const id = await spam();
    const token = emu.tokens.issue(REP);
    const r = await fetch(`${emu.baseUrl}/gmail/v1/users/me/messages/${id}/modify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ addLabelIds: ['SENT'] }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toBe('Invalid label: SENT');
  });
});
