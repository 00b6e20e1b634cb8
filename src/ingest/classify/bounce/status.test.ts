import { describe, expect, it } from 'vitest';
import { findReplyCode, findStatus, looksTemporary, preferStatus } from './status.ts';

describe('findStatus', () => {
  it('reads the enhanced code after the reply code', () => {
    expect(findStatus('550 5.1.1 <kijitora@example.jp>... User Unknown')).toBe('5.1.1');
    expect(findStatus('553 SPF fail (#5.7.1)')).toBe('5.7.1');
    expect(findStatus('550-5.7.26 Unauthenticated email 550 5.7.26 https://support.example')).toBe('5.7.26');
  });

  it('does not read IP addresses, version numbers or longer numbers as codes', () => {
    expect(findStatus('host mx.example.com[192.5.1.1] said: user unknown')).toBeNull();
    expect(findStatus('Exim v4.5.1 rejected it')).toBeNull();
    expect(findStatus('id 25.4.1234 queued')).toBeNull();
  });

  it('prefers a detailed code to X.0.0 and to 4.4.7, whatever the order', () => {
    expect(findStatus('5.0.0 then 550 5.2.2 mailbox full')).toBe('5.2.2');
    expect(findStatus('4.4.7 message expired; last error 4.4.1 no answer from host')).toBe('4.4.1');
  });

  it('drops transcript successes in a failure report when asked', () => {
    const transcript = 'Out: 250 2.1.5 Ok In: DATA Out: 451 4.3.0 Error: queue file write error Out: 221 2.0.0 Bye';
    expect(findStatus(transcript, null, true)).toBe('4.3.0');
  });
});

describe('preferStatus', () => {
  it('lets the reply code settle a class disagreement between the DSN and the text', () => {
    expect(preferStatus('4.5.0', '5.5.0', 550)).toBe('5.5.0');
    expect(preferStatus('5.0.0', '4.2.2', 452)).toBe('4.2.2');
  });

  it('keeps a specific Status field over a vaguer code in the text', () => {
    expect(preferStatus('5.1.1', '5.0.0', null)).toBe('5.1.1');
    expect(preferStatus('5.0.0', '5.1.1', null)).toBe('5.1.1');
  });
});

describe('findReplyCode', () => {
  it('finds the SMTP reply code, not digits inside addresses or numbers', () => {
    expect(findReplyCode('host said: 550 Requested action not taken')).toBe(550);
    expect(findReplyCode('ERROR_CODE :421, Host not reachable')).toBe(421);
    expect(findReplyCode('[2606:2800:220:6d::1]:25 socket error')).toBeNull();
    expect(findReplyCode('size 45500 bytes')).toBeNull();
  });

  it('looks only in the class it is given', () => {
    expect(findReplyCode('451 then 550', '5')).toBe(550);
  });
});

describe('looksTemporary', () => {
  it('is true for 4xx answers and words of a temporary failure, false for permanent ones', () => {
    expect(looksTemporary('452 4.2.2 mailbox full')).toBe(true);
    expect(looksTemporary('Service refused, please try again later')).toBe(true);
    expect(looksTemporary('550 5.1.1 user unknown')).toBe(false);
    expect(looksTemporary('mailbox unavailable')).toBe(false);
  });
});
