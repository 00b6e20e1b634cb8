import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import type { Transport } from '../../src/mailbox/connectors/connector.ts';
import { PENDING_KEYWORD } from '../../src/mailbox/connectors/outcomes.ts';
import { createSmtpTransport, type SmtpTransportConfig } from '../../src/mailbox/connectors/smtp-imap/smtp-transport.ts';
import { describeMailBed } from './describe-mail-bed.ts';
import { startFaultProxy, type FaultMode, type FaultProxy } from './fault-proxy.ts';
import { bedEndpoint, countByMessageId, mailBed, readBounces, readInbox } from './mailbed.ts';

/**
 * The SMTP transport through the real Postfix into the real Dovecot, read back over IMAP. Each test
 * makes its own Message-IDs, so it needs no reset and can run beside other mail tests.
 */

const [p1, p2, p3] = mailBed.prospects;
const { alice, bob } = mailBed;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

function newId(): string {
  return `<${randomUUID()}@example.test>`;
}

function message(from: string, to: string, messageId: string): Buffer {
  return Buffer.from(
    [
      `From: Alice Rep <${from}>`,
      `To: <${to}>`,
      'Subject: =?UTF-8?Q?Quick_question_=E2=80=94_integration?=',
      `Message-ID: ${messageId}`,
      'Date: Sun, 29 Nov 2026 18:00:00 +0000',
      'MIME-Version: 1.0',
      'X-Cadenza-Enrollment: 0192f7a0-1d2b-7c3d-9e4f-5a6b7c8d9e0f',
      'List-Unsubscribe: <https://t.example.test/u/abc>',
      'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      'Hi there,',
      '.this line starts with a dot',
      'Grüße',
      '',
    ].join('\r\n'),
  );
}

function transport(who: { user: string; pass: string }, over: Partial<SmtpTransportConfig> = {}): Transport {
  const t = createSmtpTransport(
    {
      smtp: bedEndpoint('smtp'),
      imap: bedEndpoint('imap'),
      username: who.user,
      auth: { kind: 'password', password: who.pass },
      serverSavesSent: who.user !== bob.user,
      timeouts: { connectMs: 2_000, greetingMs: 2_000, socketMs: 3_000, totalMs: 10_000 },
      ...over,
    },
    { clock: systemClock },
  );
  closers.push(() => t.close());
  return t;
}

/** The transport through the fault proxy: plain SMTP (the proxy must see the terminator). */
async function viaProxy(who: { user: string; pass: string }, mode: FaultMode): Promise<{ t: Transport; proxy: FaultProxy }> {
  const proxy = await startFaultProxy({ host: mailBed.host, port: mailBed.submissionPort }, mode);
  closers.push(() => proxy.close());
  const t = transport(who, { smtp: { host: proxy.host, port: proxy.port, security: 'none', allowSelfSigned: false } });
  return { t, proxy };
}

/** Polls findSent until it says found (server-side Sent copies land ~100-300 ms after the 250). */
async function findSentSoon(t: Transport, messageId: string, waitMs = 5_000) {
  const until = Date.now() + waitMs;
  for (;;) {
    const r = await t.findSent(messageId);
    if (r.status !== 'not_found' || Date.now() >= until) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

describeMailBed('SMTP transport against Postfix + Dovecot', () => {
  it('delivers over STARTTLS with AUTH: headers and body intact in the INBOX, the copy in the Sent folder filed by the server', async () => {
    const id = newId();
    const raw = message(alice.user, p1!.user, id);
    const out = await transport(alice).send(raw, { from: alice.user, to: [p1!.user] }, { messageId: id });
    expect(out).toMatchObject({ kind: 'accepted', bounced: [], sentCopy: 'server' });
    if (out.kind !== 'accepted') return;
    expect(out.response).toMatch(/^250 2\.0\.0 Ok: queued as /);
    expect(out.providerId).toMatch(/^[0-9A-F]+$/);

    const [got] = await readInbox(p1!.user, p1!.pass, id);
    expect(got).toBeDefined();
    const text = got!.source.toString('utf8');
    // What we sent is the tail of what was stored: the servers only add trace headers on top.
    expect(got!.source.subarray(got!.source.length - raw.length).equals(raw)).toBe(true);
    expect(text).toMatch(/^Return-Path: <alice@example\.test>/m);
    expect(text).toContain(`Message-ID: ${id}`);
    expect(text).toContain('X-Cadenza-Enrollment: 0192f7a0-1d2b-7c3d-9e4f-5a6b7c8d9e0f');
    expect(text).toContain('\r\n.this line starts with a dot\r\nGrüße\r\n');

    const inSent = await readInbox(alice.user, alice.pass, id, { folder: 'Sent' });
    expect(inSent).toHaveLength(1);
    expect(await findSentSoon(transport(alice), id)).toMatchObject({ status: 'found' });
    expect(await countByMessageId(p1!.user, p1!.pass, id)).toBe(1);
  });

  it('serverSavesSent = false: the transport APPENDs the exact bytes to Sent before the handover, marked \\Seen, and settles the copy after the 250', async () => {
    const id = newId();
    const raw = message(bob.user, p2!.user, id);
    const t = transport(bob);
    const out = await t.send(raw, { from: bob.user, to: [p2!.user] }, { messageId: id });
    expect(out).toMatchObject({ kind: 'accepted', sentCopy: 'appended' });
    const sent = await readInbox(bob.user, bob.pass, id, { folder: 'Sent', waitMs: 0 });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.source.equals(raw)).toBe(true);
    expect(sent[0]!.flags).toContain('\\Seen');
    expect(sent[0]!.flags).not.toContain(PENDING_KEYWORD);
    expect(await t.findSent(id)).toEqual({ status: 'found', sentAt: expect.any(Number) });
    expect(await readInbox(p2!.user, p2!.pass, id)).toHaveLength(1);
  });

  it('serverSavesSent = false and a bounce at RCPT: the pending copy is removed again, so absence proves "never handed over"', async () => {
    const id = newId();
    const t = transport(bob);
    const out = await t.send(message(bob.user, 'nobody@prospects.test', id), { from: bob.user, to: ['nobody@prospects.test'] }, { messageId: id });
    expect(out).toMatchObject({ kind: 'bounce' });
    expect(await countByMessageId(bob.user, bob.pass, id, 'Sent')).toBe(0);
    expect(await t.findSent(id)).toEqual({ status: 'not_found' });
  });

  it('a recipient unknown at RCPT: bounce with 5.1.1 and the recipient, nothing queued', async () => {
    const id = newId();
    const out = await transport(alice).send(message(alice.user, 'nobody@prospects.test', id), { from: alice.user, to: ['nobody@prospects.test'] }, { messageId: id });
    expect(out).toEqual({
      kind: 'bounce',
      recipients: [
        {
          recipient: 'nobody@prospects.test',
          responseCode: 550,
          enhancedStatus: '5.1.1',
          diagnostic: expect.stringContaining('User unknown in virtual mailbox table') as unknown as string,
        },
      ],
    });
    expect(await transport(alice).findSent(id)).toEqual({ status: 'not_found' });
  });

  it('a recipient accepted at RCPT and refused later: accepted now, the DSN reaches the sender (for the ingest side)', async () => {
    const id = newId();
    const out = await transport(alice).send(message(alice.user, 'gone@bounce.test', id), { from: alice.user, to: ['gone@bounce.test'] }, { messageId: id });
    expect(out.kind).toBe('accepted');
    const dsns = await readBounces(alice.user, alice.pass, id);
    expect(dsns).toHaveLength(1);
    expect(dsns[0]!.source.toString('utf8')).toMatch(/Status: 5\.1\.1/);
  });

  it('a wrong password: auth_failed with 535, and findSent is unavailable (not not_found)', async () => {
    const id = newId();
    const t = transport({ user: alice.user, pass: 'not-the-password' });
    const out = await t.send(message(alice.user, p1!.user, id), { from: alice.user, to: [p1!.user] }, { messageId: id });
    expect(out).toMatchObject({ kind: 'auth_failed', phase: 'auth', responseCode: 535 });
    expect(await t.findSent(id)).toMatchObject({ status: 'unavailable' });
  });

  it("dropped after the terminator (Postfix's 250 swallowed): ambiguous; findSent finds it; delivered exactly once", async () => {
    const id = newId();
    const { t, proxy } = await viaProxy(alice, { kind: 'drop_after_terminator' });
    const out = await t.send(message(alice.user, p3!.user, id), { from: alice.user, to: [p3!.user] }, { messageId: id });
    expect(out).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data', sentCopy: 'server' });
    expect(proxy.stats.swallowedReplies).toBe(1);
    expect(await findSentSoon(t, id)).toMatchObject({ status: 'found' });
    expect(await readInbox(p3!.user, p3!.pass, id)).toHaveLength(1);
    // Still one a moment later: nothing was sent twice.
    await new Promise((r) => setTimeout(r, 300));
    expect(await countByMessageId(p3!.user, p3!.pass, id)).toBe(1);
  });

  it('dropped just before the terminator: ambiguous; not found after the grace period; a retry with the SAME Message-ID delivers exactly once', async () => {
    const id = newId();
    const raw = message(alice.user, p3!.user, id);
    const { t, proxy } = await viaProxy(alice, { kind: 'drop_before_terminator' });
    const first = await t.send(raw, { from: alice.user, to: [p3!.user] }, { messageId: id });
    expect(first).toMatchObject({ kind: 'ambiguous', phase: 'end_of_data' });
    expect(proxy.stats.dropped).toBe(1);

    // Grace: 1 s, several times the 100-300 ms Postfix + LMTP take to file a Sent copy here (the
    // outbox's unknownGraceMs plays this part in production).
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await t.findSent(id)).toEqual({ status: 'not_found' });
    expect(await countByMessageId(p3!.user, p3!.pass, id)).toBe(0);

    proxy.setMode({ kind: 'pass' });
    const retry = await t.send(raw, { from: alice.user, to: [p3!.user] }, { messageId: id });
    expect(retry.kind).toBe('accepted');
    expect(await readInbox(p3!.user, p3!.pass, id)).toHaveLength(1);
    expect(await findSentSoon(t, id)).toMatchObject({ status: 'found' });
    await new Promise((r) => setTimeout(r, 300));
    expect(await countByMessageId(p3!.user, p3!.pass, id)).toBe(1);
    expect(await countByMessageId(alice.user, alice.pass, id, 'Sent')).toBe(1);
  });

  it('serverSavesSent = false and dropped after the terminator: the copy written first stays pending, so findSent says found and pending (possibly sent, never a second send)', async () => {
    const id = newId();
    const { t } = await viaProxy(bob, { kind: 'drop_after_terminator' });
    const out = await t.send(message(bob.user, p2!.user, id), { from: bob.user, to: [p2!.user] }, { messageId: id });
    expect(out).toMatchObject({ kind: 'ambiguous', sentCopy: 'pending' });
    const [copy] = await readInbox(bob.user, bob.pass, id, { folder: 'Sent', waitMs: 0 });
    expect(copy?.flags).toContain(PENDING_KEYWORD);
    expect(await t.findSent(id)).toMatchObject({ status: 'found', pending: true });
    expect(await readInbox(p2!.user, p2!.pass, id)).toHaveLength(1);
  });
});
