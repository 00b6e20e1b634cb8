import { describe, expect, it } from 'vitest';
import { replyRecipients } from './reply-recipients.ts';

const own = ['rep@acme.test', 'Colleague@Acme.test'];

describe('replyRecipients (RFC 5322 3.6.2)', () => {
  it('answers Reply-To when present, else From', () => {
    expect(replyRecipients({ from: 'pat@prospect.test', replyTo: ['assistant@prospect.test'], to: ['rep@acme.test'], cc: [] }, own, false)).toEqual({ ok: true, to: ['assistant@prospect.test'], cc: [], via: 'reply_to' });
    expect(replyRecipients({ from: 'pat@prospect.test', replyTo: [], to: ['rep@acme.test'], cc: [] }, own, false)).toEqual({ ok: true, to: ['pat@prospect.test'], cc: [], via: 'from' });
    // Several Reply-To addresses all receive it.
    expect(replyRecipients({ from: 'pat@prospect.test', replyTo: ['a@prospect.test', 'b@prospect.test'], to: [], cc: [] }, own, false)).toMatchObject({ to: ['a@prospect.test', 'b@prospect.test'] });
  });

  it('copies the other recipients only on reply all, never our own mailboxes, nobody twice', () => {
    const m = { from: 'pat@prospect.test', replyTo: [], to: ['rep@acme.test', 'boss@prospect.test'], cc: ['colleague@acme.test', 'Boss@prospect.test', 'cfo@prospect.test', 'PAT@prospect.test'] };
    expect(replyRecipients(m, own, false)).toMatchObject({ to: ['pat@prospect.test'], cc: [] });
    expect(replyRecipients(m, own, true)).toMatchObject({ to: ['pat@prospect.test'], cc: ['boss@prospect.test', 'cfo@prospect.test'] });
  });

  it('a Reply-To of our own falls back to From; nobody but ourselves is refused', () => {
    expect(replyRecipients({ from: 'pat@prospect.test', replyTo: ['REP@acme.test'], to: [], cc: [] }, own, false)).toEqual({ ok: true, to: ['pat@prospect.test'], cc: [], via: 'from' });
    expect(replyRecipients({ from: 'rep@acme.test', replyTo: [], to: ['colleague@acme.test'], cc: [] }, own, true)).toMatchObject({ ok: false });
    expect(replyRecipients({ from: null, replyTo: [], to: [], cc: [] }, own, false)).toMatchObject({ ok: false });
  });
});
