import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { parseFilter } from '../../sim/emulators/graph/odata.ts';
import { odataString } from './graph/message.ts';
import { checkOutgoing, headerBlock } from './outgoing-check.ts';

const msg = (headers: string) => Buffer.from(`${headers}\r\n\r\nbody: with a colon\r\nTo: not-a-header@x.test\r\n`);

describe('checkOutgoing', () => {
  it('accepts a message whose headers name exactly the envelope recipients, folded and with encoded names', () => {
    const raw = msg(
      [
        'From: a@b.test',
        'To: =?UTF-8?Q?J=C3=B6rg?= <Jorg@Example.test>,',
        ' "Doe, Jane" <jane@example.test>',
        'Cc: c@example.test',
        'Bcc: <d@example.test>',
        'Message-ID: <m1@b.test>',
      ].join('\r\n'),
    );
    expect(() =>
      checkOutgoing(raw, { from: 'a@b.test', to: ['jorg@example.test', 'jane@example.test', 'c@example.test', 'D@example.test'] }, '<m1@b.test>'),
    ).not.toThrow();
  });

  it('refuses a missing, different or repeated Message-ID, and recipients that differ either way', () => {
    const env = { from: 'a@b.test', to: ['x@y.test'] };
    const bad = (headers: string, to = env.to, id = '<m@b.test>') => {
      try {
        checkOutgoing(msg(headers), { ...env, to }, id);
        return null;
      } catch (e) {
        expect(isCadenzaError(e, 'INVALID_INPUT')).toBe(true);
        return (e as Error).message;
      }
    };
    expect(bad('To: x@y.test')).toContain('Message-ID');
    expect(bad('To: x@y.test\r\nMessage-ID: <other@b.test>')).toContain('Message-ID');
    expect(bad('To: x@y.test\r\nMessage-ID: <m@b.test>\r\nMessage-ID: <m@b.test>')).toContain('Message-ID');
    expect(bad('To: x@y.test, z@y.test\r\nMessage-ID: <m@b.test>')).toContain('envelope');
    expect(bad('To: x@y.test\r\nMessage-ID: <m@b.test>', ['x@y.test', 'w@y.test'])).toContain('envelope');
    expect(bad('To: x@y.test\r\nMessage-ID: <m@b.test>', [])).toContain('without recipients');
    expect(bad('To: x@y.test\r\nMessage-ID: <m@b.test>')).toBeNull();
  });

  it('reads headers only up to the first empty line', () => {
    expect(headerBlock(msg('Subject: s\r\n  continued')).map((h) => [h.name, h.value])).toEqual([['subject', 's continued']]);
    expect(headerBlock(Buffer.from('Subject: only headers, no body'))).toHaveLength(1);
  });
});

describe('odataString', () => {
  it('any Message-ID survives the OData literal as the Graph emulator parses it', () => {
    const known = new Set(['internetMessageId']);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', "'", ' ', '<', '>', '@', 'é', '%', '+', 'and', 'eq') }), (s) => {
        const f = parseFilter(`internetMessageId eq ${odataString(s)}`, known);
        expect(f.ok).toBe(true);
        if (f.ok) {
          expect(f.filter({ internetMessageId: s })).toBe(true);
          expect(f.filter({ internetMessageId: `${s}x` })).toBe(false);
        }
      }),
    );
  });
});
