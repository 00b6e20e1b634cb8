import { describe, expect, it } from 'vitest';
import { repairedBoundary } from './boundary-repair.ts';
import { parseMail } from './parse-mail.ts';
import { UNSPLIT_SMS_BOUNCE } from '../../../test/fixtures/mail/unsplit-multipart.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const message = (declared: string, used: string) =>
  ['From: a@example.com', `Content-Type: multipart/mixed;\n\tboundary="${declared}"`, '', 'preamble', `--${used}`, 'Content-Type: text/plain', '', 'Hello there', `--${used}`, 'Content-Type: text/plain', 'Content-Disposition: attachment; filename="n.txt"', '', 'note', `--${used}--`, ''].join('\n');

describe('a multipart whose declared boundary its body does not use', () => {
  it('is parsed with the delimiter the body uses', async () => {
    const mail = await parseMail(message('AB.1720293561/host', 'AB.1528513261/host'));
    expect(mail.text.trim()).toBe('Hello there');
    expect(mail.parts.map((p) => p.filename)).toEqual(['n.txt']);
  });

  it('is left alone when the declared boundary is there, or the body has no second delimiter', () => {
    expect(repairedBoundary(enc(message('same', 'same')), 65536)).toBeNull();
    const once = ['From: a@example.com', 'Content-Type: multipart/mixed; boundary=x', '', '--y', 'text'].join('\n');
    expect(repairedBoundary(enc(once), 65536)).toBeNull();
    expect(repairedBoundary(enc('From: a@example.com\nContent-Type: text/plain\n\n--y\n--y--\n'), 65536)).toBeNull();
  });
});

describe('a multipart that no boundary splits', () => {
  it('is read as plain text without its delimiter and part-header lines (a nested boundary= left unfolded)', async () => {
    const mail = await parseMail(UNSPLIT_SMS_BOUNCE);
    expect(mail.text.split('\n').slice(0, 4)).toEqual(['Error: Invalid user address', '', 'Error message below:', '550 - Requested action not taken: no such user here']);
    expect(mail.text).toMatch(/RCPT TO: 5551234567@sms\.example\.net$/);
  });
});
