import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../../common/clock.ts';
import { seededRandom } from '../../../common/random.ts';
import { describeMailBed } from '../../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, readInbox, resetMailBed } from '../../../../test/mail/mailbed.ts';
import { withImap } from '../../imap/connect.ts';
import { moveMessage } from '../../imap/move-message.ts';
import { parseImapMessageKey } from '../../imap/message-key.ts';
import { withMessage } from '../../imap/open-message.ts';
import type { FetchedMessage } from '../../sync/source.ts';
import { createConnector } from '../registry.ts';

/**
 * An SMTP/IMAP mailbox's folder actions against the bed's Dovecot, through the connector the
 * registry builds: a message the sync found in Junk (by its sync key) is moved to INBOX (UID MOVE),
 * flagged and marked read (UID STORE); a stale key is not_found; and the RFC 6851 fallback for a
 * server without MOVE (imapflow's COPY + \Deleted + EXPUNGE) on the same server, MOVE hidden.
 * Mail-bed user: sync71.
 */
const USER = 'sync71@inbox.test';
const PASS = 'pass';
const account = { endpoint: bedEndpoint('imap'), username: USER, auth: { kind: 'password' as const, password: PASS } };

/** APPENDs a message to `folder` (unread, unflagged) and returns its Message-ID. */
async function appendTo(folder: string): Promise<string> {
  const id = `<${randomUUID()}@peer.test>`;
  const raw = Buffer.from(`From: peer@peer.test\r\nTo: ${USER}\r\nSubject: warmup\r\nMessage-ID: ${id}\r\nDate: ${new Date().toUTCString()}\r\n\r\nhello\r\n`);
  await withImap(account, (c) => c.append(folder, raw, [], new Date()));
  return id;
}

/** Where the message is now, with its flags (\Recent left out: a session flag, RFC 3501 2.3.2). */
async function whereIs(messageId: string): Promise<Array<{ folder: string; flags: string[] }>> {
  const out: Array<{ folder: string; flags: string[] }> = [];
  for (const folder of ['INBOX', 'Junk']) {
    for (const m of await readInbox(USER, PASS, messageId, { folder, waitMs: 0 })) out.push({ folder, flags: m.flags.filter((f) => f !== '\\Recent').sort() });
  }
  return out;
}

describeMailBed('IMAP folder actions on the bed', () => {
  const connector = createConnector(
    { id: '0192f7a0-0000-7000-8000-000000000071', email: USER, provider: 'smtp_imap', settings: { imap: bedEndpoint('imap') } },
    { clock: systemClock, random: seededRandom(71), credential: { kind: 'password', username: USER, password: PASS } },
    ['sync', 'folders'],
  );
  /** The sync's key of the copy with this Message-ID, as a first pull finds it. */
  async function syncKey(messageId: string): Promise<FetchedMessage> {
    for await (const batch of connector.pull(null, { resyncWindowMs: 3_600_000 })) {
      for (const m of batch.messages) if (Buffer.from(m.raw).toString('latin1').includes(messageId)) return m;
    }
    throw new Error(`the sync did not find ${messageId}`);
  }

  beforeAll(async () => {
    await resetMailBed([USER]);
  }, 60_000);
  afterAll(async () => {
    await connector.close();
  });

  it('moves a Junk message (by its sync key) to INBOX, flags it and marks it read; a stale key is not_found', async () => {
    const id = await appendTo('Junk');
    const found = await syncKey(id);
    expect(found.folder).toBe('junk');
    expect(found.key).toMatch(/^Junk:\d+:\d+$/);
    expect(await whereIs(id)).toEqual([{ folder: 'Junk', flags: [] }]);

    const moved = await connector.moveToInbox(found.key);
    expect(moved.status).toBe('done');
    const key = moved.status === 'done' ? moved.key : null;
    // Dovecot has UIDPLUS: the copy's new UID comes back (COPYUID), and the sync would key it so.
    expect(key).toMatch(/^INBOX:\d+:\d+$/);
    expect(await whereIs(id)).toEqual([{ folder: 'INBOX', flags: [] }]);
    expect(await connector.flag(key!)).toEqual({ status: 'done', key });
    expect(await connector.markRead(key!)).toEqual({ status: 'done', key });
    expect(await whereIs(id)).toEqual([{ folder: 'INBOX', flags: ['\\Flagged', '\\Seen'] }]);
    // Idempotent: already in INBOX, already flagged.
    expect(await connector.moveToInbox(key!)).toEqual({ status: 'done', key });
    expect(await connector.flag(key!)).toEqual({ status: 'done', key });

    // The Junk key names nothing any more; nor does a key from another UIDVALIDITY.
    expect(await connector.moveToInbox(found.key)).toMatchObject({ status: 'not_found', reason: expect.stringMatching(/no message with UID/) });
    const at = parseImapMessageKey(key!)!;
    expect(await connector.markRead(`INBOX:${Number(at.uidValidity) + 1}:${at.uid}`)).toMatchObject({ status: 'not_found', reason: expect.stringMatching(/UIDVALIDITY/) });
    expect(await connector.flag('Nowhere:1:1')).toMatchObject({ status: 'not_found' });
    expect(await connector.flag('18f00000000fffff')).toMatchObject({ status: 'not_found' });
  }, 60_000);

  it('without the MOVE extension, imapflow copies, deletes and expunges (RFC 6851 fallback): one copy, in INBOX', async () => {
    const id = await appendTo('Junk');
    const found = await syncKey(id);
    const at = parseImapMessageKey(found.key)!;
    const r = await withImap(account, async (c) => {
      c.capabilities.delete('MOVE');
      return withMessage(c, at, (uid) => moveMessage(c, uid, 'INBOX'));
    });
    expect(r.found && r.value.uid).toBeGreaterThan(0);
    expect(await whereIs(id)).toEqual([{ folder: 'INBOX', flags: [] }]);
  }, 60_000);

  it('a server that cannot be reached is unavailable', async () => {
    const down = createConnector(
      { id: '0192f7a0-0000-7000-8000-000000000072', email: USER, provider: 'smtp_imap', settings: { imap: { ...bedEndpoint('imap'), port: 1 } } },
      { clock: systemClock, random: seededRandom(72), credential: { kind: 'password', username: USER, password: PASS } },
      ['folders'],
    );
    expect(await down.moveToInbox('Junk:1:1')).toMatchObject({ status: 'unavailable' });
    await down.close();
  });
});
