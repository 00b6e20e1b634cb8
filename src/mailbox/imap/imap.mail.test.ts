import { randomUUID } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedEndpoint, mailBed } from '../../../test/mail/mailbed.ts';
import type { ImapAccount } from './account.ts';
import { appendToSent } from './append-to-sent.ts';
import { connectImap, withImap } from './connect.ts';
import { findByMessageId } from './find-by-message-id.ts';
import { findFolder, findSpecialFolders } from './special-folders.ts';

/** The IMAP verbs against the test bed's Dovecot (SPECIAL-USE, UIDPLUS). */

const p4 = mailBed.prospects[3]!;
const account = (over: Partial<ImapAccount> = {}): ImapAccount => ({
  endpoint: bedEndpoint('imap'),
  username: p4.user,
  auth: { kind: 'password', password: p4.pass },
  timeouts: { connectMs: 2_000, greetingMs: 2_000, socketMs: 5_000 },
  ...over,
});

const msg = (headers: string) => Buffer.from(`From: p4@prospects.test\r\nTo: x@example.test\r\nSubject: imap test\r\n${headers}\r\n\r\nbody\r\n`);

async function errorOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describeMailBed('IMAP verbs against Dovecot', () => {
  it('finds Sent, Junk and Trash by SPECIAL-USE', async () => {
    expect(await withImap(account(), (c) => findSpecialFolders(c))).toEqual({ sent: 'Sent', junk: 'Junk', trash: 'Trash' });
  });

  it('appends to Sent (\\Seen, dated when sent, APPENDUID) and finds it again by Message-ID, exact matches only', async () => {
    const id = `<${randomUUID()}@prospects.test>`;
    const sentAt = new Date('2026-11-29T17:00:00Z');
    const copy = await withImap(account(), (c) => appendToSent(c, msg(`Message-ID: ${id}`), { sentAt }));
    expect(copy.folder).toBe('Sent');
    expect(copy.uid).toBeGreaterThan(0);
    expect(copy.uidValidity).toMatch(/^\d+$/);

    // Decoys: the id only in References, and a malformed header with two ids.
    await withImap(account(), async (c) => {
      await appendToSent(c, msg(`Message-ID: <${randomUUID()}@prospects.test>\r\nReferences: ${id}`), { sentAt });
      await appendToSent(c, msg(`Message-ID: <${randomUUID()}@prospects.test> ${id}`), { sentAt });
    });
    const found = await withImap(account(), (c) => findByMessageId(c, 'Sent', id));
    expect(found).toEqual([{ uid: copy.uid, internalDate: sentAt.getTime(), flags: expect.arrayContaining(['\\Seen']) }]);
    expect(await withImap(account(), (c) => findByMessageId(c, 'Sent', `<${randomUUID()}@prospects.test>`))).toEqual([]);
  });

  it("uses the user's folder choice, and names a missing folder MAILBOX_FOLDER_NOT_FOUND", async () => {
    const chosen = account({ folders: { sent: 'Drafts' } });
    const copy = await withImap(chosen, (c) => appendToSent(c, msg(`Message-ID: <${randomUUID()}@prospects.test>`), { sentAt: new Date(), account: chosen }));
    expect(copy.folder).toBe('Drafts');
    expect(await withImap(account(), (c) => findFolder(c, 'sent', { folders: { sent: 'Elsewhere' } }))).toBe('Elsewhere');
    const err = await errorOf(withImap(account(), (c) => findByMessageId(c, 'No Such Folder', '<a@b.test>')));
    expect(isCadenzaError(err, 'MAILBOX_FOLDER_NOT_FOUND')).toBe(true);
  });

  it('says MAILBOX_AUTH_FAILED for a wrong password and MAILBOX_UNAVAILABLE for a dead port, leaving no socket open', async () => {
    const wrong = await errorOf(connectImap(account({ auth: { kind: 'password', password: 'nope' } })));
    expect(isCadenzaError(wrong, 'MAILBOX_AUTH_FAILED')).toBe(true);
    expect(String((wrong as Error).message)).not.toContain('nope');

    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const port = (s.address() as AddressInfo).port;
    await new Promise<void>((r) => s.close(() => r()));
    const dead = await errorOf(connectImap(account({ endpoint: { ...bedEndpoint('imap'), port } })));
    expect(isCadenzaError(dead, 'MAILBOX_UNAVAILABLE')).toBe(true);

    const thrown = await errorOf(withImap(account(), async () => Promise.reject(new Error('boom'))));
    expect((thrown as Error).message).toBe('boom');
    for (let i = 0; i < 50 && process.getActiveResourcesInfo().some((r) => r === 'TCPSocketWrap'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap')).toEqual([]);
  });
});
