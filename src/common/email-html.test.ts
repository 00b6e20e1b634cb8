import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { htmlToText, sanitizeEmailHtml, withSignature } from './email-html.ts';

describe('sanitizeEmailHtml', () => {
  it('keeps the editor\'s formatting and template syntax as written', () => {
    const html = '<p>Hi {{first_name | default: "there"}},</p><p><strong>Bold</strong> <em>it</em> <u>u</u> <a href="https://acme.example/x?a=1&amp;b=2">link</a></p><ul><li><p>one</p></li></ul>';
    expect(sanitizeEmailHtml(html)).toBe(html);
  });

  it.each([
    ['script', '<p>a<script>alert(1)</script>b</p>', '<p>ab</p>'],
    ['event handler', '<p onclick="x()">a</p>', '<p>a</p>'],
    ['javascript link', '<a href="java&#x09;script:alert(1)">x</a>', '<a>x</a>'],
    ['svg script', '<svg><script>alert(1)</script></svg>ok', 'ok'],
    ['style with url', '<p style="background:url(https://t.example/p)">a</p>', '<p>a</p>'],
    ['nested tag name', '<scr<script>ipt>alert(1)</script>', 'ipt&gt;alert(1)'],
    ['iframe', '<iframe src="https://x.example"></iframe>a', 'a'],
  ])('drops %s', (_case, input, out) => {
    expect(sanitizeEmailHtml(input)).toBe(out);
  });

  // Property: whatever comes in, no executable markup comes out, and a second pass changes nothing.
  const hostile = fc.array(
    fc.oneof(
      fc.constantFrom('<script>', '</script>', '<img src=x onerror=alert(1)>', '<a href="javascript:alert(1)">', '<svg onload=1>', '<iframe>', '<style>', '"', "'", '<', '>', '&#106;avascript:', '<!--', '-->', '<p', ' on', 'click=', '<a href=', 'data:text/html,', '<math>', '<template>', '</p>', '<b>'),
      fc.string({ maxLength: 8 }),
    ),
    { maxLength: 60 },
  );

  it('never lets a script, handler or javascript: URL through (fuzz)', () => {
    const started = Date.now();
    fc.assert(
      fc.property(hostile, (parts) => {
        const out = sanitizeEmailHtml(parts.join(''));
        expect(out).not.toMatch(/<\s*(script|iframe|svg|math|style|template|object|embed)/i);
        expect(out).not.toMatch(/<[^>]*\son[a-z]+\s*=/i);
        expect(out).not.toMatch(/<[^>]*(href|src)\s*=\s*"\s*(javascript|data:text|vbscript)/i);
        expect(sanitizeEmailHtml(out)).toBe(out);
      }),
      { numRuns: 2000, seed: 19 },
    );
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('is linear on a huge hostile input', () => {
    const big = '<a href="'.repeat(20_000) + '<p '.repeat(20_000) + '<script>'.repeat(20_000);
    const started = Date.now();
    sanitizeEmailHtml(big);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('htmlToText', () => {
  it('writes paragraphs, breaks, lists and links as plain text', () => {
    const html = '<p>Hi {{first_name | default: &quot;there&quot;}},</p><p>Line one<br>line two &amp; more</p><ul><li><p>alpha</p></li><li><p>beta</p></li></ul><ol><li>first</li><li>second</li></ol><p>See <a href="https://acme.example/demo">the demo</a> or <a href="https://acme.example">https://acme.example</a>.</p>';
    expect(htmlToText(html)).toBe('Hi {{first_name | default: "there"}},\n\nLine one\nline two & more\n\n- alpha\n- beta\n\n1. first\n2. second\n\nSee the demo (https://acme.example/demo) or https://acme.example.');
  });

  it('writes the no-break space a browser types at the end of a line as a space', () => {
    expect(htmlToText('<p>Hi&nbsp;{{first_name}}</p><p>a&nbsp;&nbsp;b</p>')).toBe('Hi {{first_name}}\n\na  b');
  });

  it('collapses markup whitespace and skips images without alt', () => {
    expect(htmlToText('<div>  a\n   b </div><div><img src="https://x.example/i.png"><img alt="Logo" src="x"></div>')).toBe('a b\nLogo');
  });

  it('terminates on any input in bounded time (fuzz)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (s) => typeof htmlToText(s) === 'string'), { numRuns: 500, seed: 7 });
  });
});

describe('withSignature', () => {
  const sig = { html: '<p><strong>Sam</strong><br>Acme</p>', text: 'Sam\nAcme' };
  it('appends to both parts, inside the body', () => {
    const r = withSignature({ subject: 's', text: 'Hello\n', html: '<html><body><p>Hello</p></body></html>' }, sig);
    expect(r.text).toBe('Hello\n\nSam\nAcme');
    expect(r.html).toBe('<html><body><p>Hello</p><div class="cadenza-signature"><p><strong>Sam</strong><br>Acme</p></div></body></html>');
  });
  it('appends its text alone to a text-only email, and nothing without a signature', () => {
    expect(withSignature({ text: 'Hello', html: null }, sig)).toEqual({ text: 'Hello\n\nSam\nAcme', html: null });
    expect(withSignature({ text: 'Hello' }, null)).toEqual({ text: 'Hello' });
  });
});
