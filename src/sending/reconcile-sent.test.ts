import { describe, expect, it } from 'vitest';
import { keysByLocalPart, matchCopies } from './reconcile-sent.ts';
import { stepMessageId } from './step-message-id.ts';

const key = (e: string, s: string) => ({ enrollmentId: e, stepId: s, workspaceId: 'w', leadEmail: 'lead@x.test' });
const copy = (messageId: string) => ({ messageId, sentAt: 1, to: ['lead@x.test'], subject: 'Hi', inReplyTo: null, pending: false });

describe('matchCopies: a Sent copy is tied to the step of the restored data whose Message-ID it carries', () => {
  const e1 = '0190a3c4-1111-7000-8000-000000000001';
  const e2 = '0190a3c4-1111-7000-8000-000000000002';
  const s1 = '0190a3c4-2222-7000-8000-000000000001';
  const keys = keysByLocalPart([key(e1, s1), key(e2, s1)]);

  it('by the local part, whatever the case or the surrounding space', () => {
    const id = stepMessageId('rep@acme.test', e2, s1);
    expect(matchCopies([copy(` ${id.toUpperCase()} `)], keys)[0]!.key).toMatchObject({ enrollmentId: e2, stepId: s1 });
  });

  it('a copy of an enrollment the restored data lacks, a person\'s mail or a random id matches nothing', () => {
    const lost = stepMessageId('rep@acme.test', '0190a3c4-1111-7000-8000-000000000003', s1);
    const got = matchCopies([copy(lost), copy('<CAF=xyz@mail.gmail.com>'), copy('<0190a3c4-9999-7000-8000-000000000001@acme.test>'), copy('garbage')], keys);
    expect(got.map((g) => g.key)).toEqual([null, null, null, null]);
  });
});
