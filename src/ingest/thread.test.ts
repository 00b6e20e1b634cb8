import { describe, expect, it } from 'vitest';
import { matchThread, normaliseSubject, referencedIds, type OutboundRef, type ThreadContext } from './thread.ts';

const ref = (messageId: string, over: Partial<OutboundRef> = {}): OutboundRef => ({ messageId, mailboxId: 'mb', enrollmentId: `e-${messageId}`, sendRequestId: null, threadId: null, subject: 'Quick question', toNorm: 'pat@acme.test', at: 0, ...over });

describe('normaliseSubject', () => {
  it.each([
    ['Re: Quick question', 'quick question'],
    ['RE : Quick question', 'quick question'],
    ['AW: WG: Quick  question', 'quick question'],
    ['SV: Vs: Quick question', 'quick question'],
    ['Re[2]: Fwd: Quick question', 'quick question'],
    ['Antw: TR: RV: Quick question', 'quick question'],
    ['Odp: R: Quick question', 'quick question'],
    ['回复：Quick question', 'quick question'],
    ['Ответ: Quick question', 'quick question'],
    ['[EXTERNAL] Re: Quick question', 'quick question'],
    ['Quick question', 'quick question'],
    ['Reply needed: budget', 'reply needed: budget'],
    ['Research: notes', 'research: notes'],
  ])('%s → %s', (input, out) => expect(normaliseSubject(input)).toBe(out));
});

describe('matchThread', () => {
  const ctx = (refs: OutboundRef[], byAddress: Record<string, OutboundRef[]> = {}): ThreadContext => ({
    byMessageId: new Map(refs.map((r) => [r.messageId, r])),
    byThreadId: new Map(refs.filter((r) => r.threadId).map((r) => [r.threadId!, r])),
    recentByAddress: new Map(Object.entries(byAddress)),
  });
  const mail = (o: Partial<Parameters<typeof matchThread>[0]['mail']> = {}) => ({ messageId: '<in@x>', inReplyTo: null, references: [], subject: 'Re: Quick question', from: { address: 'pat@acme.test', name: '' }, ...o });
  const human = { label: 'human_reply' as const };

  it('prefers In-Reply-To, then References newest first', () => {
    expect(referencedIds({ inReplyTo: '<c>', references: ['<a>', '<b>', '<c>'] }).map((r) => r.id)).toEqual(['<c>', '<b>', '<a>']);
    const m = matchThread({ mail: mail({ references: ['<a>', '<b>'] }), threadId: null, classification: human }, ctx([ref('<a>'), ref('<b>')]));
    expect(m).toMatchObject({ kind: 'matched', via: 'references', ref: { messageId: '<b>' } });
  });

  it('recognises our own message', () => {
    expect(matchThread({ mail: mail({ messageId: '<a>' }), threadId: null, classification: human }, ctx([ref('<a>')])).kind).toBe('own');
  });

  it('falls back to the provider thread, then to sender + subject, else none', () => {
    expect(matchThread({ mail: mail(), threadId: 't1', classification: human }, ctx([ref('<a>', { threadId: 't1' })]))).toMatchObject({ via: 'provider_thread' });
    const bySubject = ctx([], { 'pat@acme.test': [ref('<new>', { subject: 'Other' }), ref('<old>')] });
    expect(matchThread({ mail: mail(), threadId: null, classification: human }, bySubject)).toMatchObject({ via: 'subject', ref: { messageId: '<old>' } });
    expect(matchThread({ mail: mail({ subject: 'Something else' }), threadId: null, classification: human }, bySubject).kind).toBe('none');
  });

  it('threads a bounce by its original Message-ID, else by the failed recipient, never by the daemon sender', () => {
    const bounce = (originalMessageId: string | null, recipient: string | null) => ({
      label: 'bounce' as const,
      bounce: { recipient, recipients: recipient ? [recipient] : [], status: '5.1.1', replyCode: 550, hardSoft: 'hard' as const, bounceClass: 'user_unknown' as const, diagnostic: null, originalMessageId },
    });
    const c = ctx([ref('<a>')], { 'pat@acme.test': [ref('<r>')] });
    const daemon = mail({ from: { address: 'mailer-daemon@mx.test', name: '' }, subject: 'Undelivered' });
    expect(matchThread({ mail: daemon, threadId: null, classification: bounce('<a>', null) }, c)).toMatchObject({ via: 'bounce_message_id' });
    expect(matchThread({ mail: daemon, threadId: null, classification: bounce(null, 'Pat@Acme.test') }, c)).toMatchObject({ via: 'bounce_recipient', ref: { messageId: '<r>' } });
    expect(matchThread({ mail: daemon, threadId: null, classification: bounce(null, null) }, c).kind).toBe('none');
  });
});
