import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDsn } from './dsn.ts';
import { findReplyCode, findStatus } from './status.ts';

const FIELDS = ['Reporting-MTA', 'Final-Recipient', 'Original-Recipient', 'Action', 'Status', 'Diagnostic-Code', 'Remote-MTA', 'X-Actual-Recipient'];
const line = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.tuple(fc.constantFrom(...FIELDS), fc.constantFrom(':', ': ', ' : ', ':\t'), fc.oneof(fc.string({ maxLength: 60 }), fc.emailAddress().map((a) => `rfc822; ${a}`), fc.constantFrom('failed', '5.1.1', '4.4.7', 'smtp; 550 5.1.1 unknown'))).map(([f, sep, v]) => `${f}${sep}${v}`),
  fc.constant(''),
  fc.string({ maxLength: 40 }).map((s) => `  ${s}`),
);

describe('parseDsn on any field soup', () => {
  it('never throws, and every recipient it reports is an address', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), fc.constantFrom('\n', '\r\n'), (lines, eol) => {
        const dsn = parseDsn(lines.join(eol));
        for (const r of dsn?.recipients ?? []) {
          if (r.recipient !== null) expect(r.recipient).toMatch(/^[^\s<>;"]+@[^\s<>;"]+$/);
          if (r.status !== null) expect(r.status).toMatch(/^[245]\.\d{1,3}\.\d{1,3}$/);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('finds the recipient and status of a well-formed block whatever surrounds it', () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.constantFrom('5.1.1', '4.2.2', '5.7.26'), fc.array(fc.string({ maxLength: 50 }).map((s) => s.replace(/[\r\n]/g, ' ')), { maxLength: 5 }), (address, status, noise) => {
        const text = [...noise, '', `Final-Recipient: rfc822; ${address}`, 'Action: failed', `Status: ${status}`, ''].join('\n');
        const r = parseDsn(text)?.recipients.at(-1);
        expect(r?.recipient).toBe(address.toLowerCase().replace(/\.+$/, ''));
        expect(r?.status).toBe(status);
      }),
      { numRuns: 300 },
    );
  });
});

describe('status and reply-code finding on any text', () => {
  it('returns well-formed codes or nothing', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const s = findStatus(text);
        if (s !== null) expect(s).toMatch(/^[245]\.[0-7]\.\d{1,3}$/);
        const r = findReplyCode(text);
        if (r !== null) expect(r >= 211 && r <= 557).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
