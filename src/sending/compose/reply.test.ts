import { describe, expect, it } from 'vitest';
import { composeReply, type ReplyInput } from './reply.ts';
import { parseMail } from '../../ingest/parse/parse-mail.ts';

const base: ReplyInput = {
  messageId: '<r1@rep.test>',
  date: Date.UTC(2026, 10, 29, 12),
  from: { address: 'rep@rep.test', name: 'Rep\r\nInjected: x' },
  to: [{ address: 'lead@lead.test' }],
  text: 'Sounds good.',
  inbound: { messageId: '<in@lead.test>', refs: ['<a@rep.test>', 'not an id', '<b@rep.test>'], subject: 'Pricing', threadId: 'g-thread' },
};

describe('composeReply', () => {
  it('threads to the inbound message: In-Reply-To, References chain, one Re:, Gmail threadId', async () => {
    const r = await composeReply(base);
    expect(r).toMatchObject({ subject: 'Re: Pricing', inReplyTo: '<in@lead.test>', references: ['<a@rep.test>', '<b@rep.test>', '<in@lead.test>'], threadId: 'g-thread', envelope: { from: 'rep@rep.test', to: ['lead@lead.test'] } });
    const m = await parseMail(r.raw);
    expect(m.messageId).toBe('<r1@rep.test>');
    expect(m.inReplyTo).toBe('<in@lead.test>');
    expect(m.references).toEqual(['<a@rep.test>', '<b@rep.test>', '<in@lead.test>']);
    expect(m.subject).toBe('Re: Pricing');
    // A display name cannot add a header.
    expect(r.raw.toString()).not.toMatch(/^Injected:/m);
    expect(r.raw.toString()).not.toMatch(/List-Unsubscribe/i);
  });

  it('reply all: To and Cc headers, every recipient in the envelope', async () => {
    const r = await composeReply({ ...base, to: [{ address: 'assistant@lead.test', name: 'Assistant' }], cc: [{ address: 'boss@lead.test' }, { address: 'cfo@lead.test' }] });
    expect(r.envelope.to).toEqual(['assistant@lead.test', 'boss@lead.test', 'cfo@lead.test']);
    const m = await parseMail(r.raw);
    expect(m.to.map((a) => a.address)).toEqual(['assistant@lead.test']);
    expect(m.cc.map((a) => a.address)).toEqual(['boss@lead.test', 'cfo@lead.test']);
    expect(/^Cc:/m.test((await composeReply(base)).raw.toString())).toBe(false);
  });

  it('does not double Re: and refuses an empty reply or an inbound message without a Message-ID', async () => {
    expect((await composeReply({ ...base, inbound: { ...base.inbound, subject: 'RE: Pricing' } })).subject).toBe('RE: Pricing');
    await expect(composeReply({ ...base, text: '  ' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(composeReply({ ...base, inbound: { ...base.inbound, messageId: 'none' } })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
