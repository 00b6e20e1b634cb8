import fc from 'fast-check';
import { expect, it } from 'vitest';
import { matchThread, normaliseSubject, referencedIds, threadKeys, type ThreadContext } from './thread.ts';

/** Threading headers are attacker-controlled: any subject and any reference list must be handled, quickly. */
const subject = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.array(fc.constantFrom('Re:', 'RE :', 'AW: ', 'Fwd:', 'SV:', '回复：', '[EXT] ', 'Re[2]:', ' ', 'Quick question', 'é'), { maxLength: 120 }).map((p) => p.join('')),
);

it('normaliseSubject never throws, is idempotent, and strips any number of prefixes in bounded time', () => {
  fc.assert(
    fc.property(subject, (s) => {
      const t0 = performance.now();
      const n = normaliseSubject(s);
      expect(normaliseSubject(n)).toBe(n);
      expect(normaliseSubject(`Re: AW: ${s}`)).toBe(normaliseSubject(s));
      expect(performance.now() - t0).toBeLessThan(200);
    }),
    { numRuns: 500 },
  );
});

it('a hostile subject (thousands of prefixes) is normalised quickly', () => {
  const t0 = performance.now();
  expect(normaliseSubject('Re: '.repeat(50_000) + 'x')).toBe('');
  expect(normaliseSubject('Re: '.repeat(100) + 'Quick question')).toBe('quick question');
  expect(performance.now() - t0).toBeLessThan(500);
});

it('the ladder never throws and only ever returns a send it was given', () => {
  const id = fc.string({ maxLength: 40 }).map((x) => `<${x}@x>`);
  fc.assert(
    fc.property(fc.option(id), fc.option(id), fc.array(id, { maxLength: 30 }), subject, fc.option(fc.string({ maxLength: 20 })), fc.array(id, { maxLength: 5 }), (messageId, inReplyTo, references, subj, threadId, known) => {
      const ref = (m: string) => ({ messageId: m, mailboxId: 'mb', enrollmentId: 'e', sendRequestId: null, threadId: null, subject: subj, toNorm: 'a@b.test', at: 0 });
      const ctx: ThreadContext = { byMessageId: new Map(known.map((k) => [k, ref(k)])), byThreadId: new Map(), recentByAddress: new Map([['a@b.test', known.map(ref)]]) };
      const input = { mail: { messageId, inReplyTo, references, subject: subj, from: { address: 'A@b.test', name: '' } }, threadId, classification: { label: 'human_reply' as const } };
      const m = matchThread(input, ctx);
      if (m.kind !== 'none') expect(known).toContain(m.ref.messageId);
      expect(referencedIds(input.mail).length).toBeLessThanOrEqual(references.length + 1);
      expect(threadKeys([input]).messageIds.length).toBeLessThanOrEqual(references.length + 2);
    }),
    { numRuns: 500 },
  );
});
