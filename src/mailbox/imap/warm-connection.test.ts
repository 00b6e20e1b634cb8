import type { ImapFlow } from 'imapflow';
import { describe, expect, it } from 'vitest';
import { cadenzaError } from '../../common/errors.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import type { ImapAccount } from './account.ts';
import { WarmImap } from './warm-connection.ts';

/** A stand-in for imapflow's client: what WarmImap reads of it (usable, close, logout). */
function fakeClient(n: number): ImapFlow & { n: number; closed: boolean } {
  const c = { n, closed: false, usable: true, close() { c.closed = true; c.usable = false; }, async logout() { c.closed = true; c.usable = false; } };
  return c as unknown as ImapFlow & { n: number; closed: boolean };
}

const account: ImapAccount = { endpoint: { host: 'imap.example.test', port: 993, security: 'tls', allowSelfSigned: false }, username: 'u', auth: { kind: 'password', password: 'p' } };

function warm() {
  const opened: Array<ImapFlow & { n: number; closed: boolean }> = [];
  const w = new WarmImap(account, { clock: new SimClock(0), connect: async () => { const c = fakeClient(opened.length + 1); opened.push(c); return c; } });
  return { w, opened };
}

describe('WarmImap', () => {
  it('keeps one connection between uses', async () => {
    const { w, opened } = warm();
    expect(await w.run(async (c) => (c as unknown as { n: number }).n)).toBe(1);
    expect(await w.run(async (c) => (c as unknown as { n: number }).n)).toBe(1);
    expect(opened).toHaveLength(1);
    await w.close();
    expect(opened[0]!.closed).toBe(true);
  });

  it('a use that fails on a reused connection is tried once on a new one, even while the old one still reads usable', async () => {
    // After a server's BYE, imapflow's NOOP swallows the error and SEARCH answers false while
    // `usable` can still be true until its close event runs: the failure alone must be enough.
    const { w, opened } = warm();
    await w.run(async () => 'warm');
    let calls = 0;
    const got = await w.run(async (c) => {
      calls++;
      if ((c as unknown as { n: number }).n === 1) throw cadenzaError('MAILBOX_UNAVAILABLE', 'IMAP UID SEARCH in Junk: the search failed');
      return 'answered';
    });
    expect(got).toBe('answered');
    expect(calls).toBe(2);
    expect(opened).toHaveLength(2);
    expect(opened[0]!.closed).toBe(true);
    await w.close();
  });

  it('a failure on a new connection, refused credentials and bad input are not retried', async () => {
    const { w, opened } = warm();
    await expect(w.run(async () => { throw cadenzaError('MAILBOX_UNAVAILABLE', 'down'); })).rejects.toThrow('down');
    expect(opened).toHaveLength(1);
    await expect(w.run(async () => { throw cadenzaError('MAILBOX_AUTH_FAILED', 'refused'); })).rejects.toThrow('refused');
    await expect(w.run(async () => { throw cadenzaError('INVALID_INPUT', 'bad'); })).rejects.toThrow('bad');
    expect(opened).toHaveLength(1);
    await w.close();
  });

  it('a second failure on the new connection is the answer', async () => {
    const { w, opened } = warm();
    await w.run(async () => 'warm');
    await expect(w.run(async () => { throw cadenzaError('MAILBOX_UNAVAILABLE', 'still down'); })).rejects.toThrow('still down');
    expect(opened).toHaveLength(2);
    await w.close();
  });
});
