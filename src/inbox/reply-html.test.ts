import { describe, expect, it } from 'vitest';
import { frameCsp, replyFrameDocument, safeReplyHtml } from './reply-html.ts';

const off = { images: false };

describe('safeReplyHtml', () => {
  it('keeps formatting, links and text; re-escapes text', () => {
    const r = safeReplyHtml('<p style="color:red">Hi <b>Dana</b> &amp; co, see <a href="https://acme.test/p?a=1&amp;b=2" onclick="x()">this</a> 1 &lt; 2</p>', off);
    expect(r.html).toBe('<p style="color:red">Hi <b>Dana</b> &amp; co, see <a href="https://acme.test/p?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">this</a> 1 &lt; 2</p>');
  });

  it.each([
    ['script element', '<script>alert(1)</script>ok'],
    ['script split around another', '<scr<script>x</script>ipt>alert(1)</script>ok'],
    ['event handler', '<img src="data:image/png;base64,AA" onerror="alert(1)">ok'],
    ['unquoted handler', '<div onmouseover=alert(1)>ok</div>'],
    ['javascript link with entities', '<a href="jav&#x61;script:alert(1)">ok</a>'],
    ['javascript link with a tab', '<a href="java\tscript:alert(1)">ok</a>'],
    ['svg script', '<svg><script>alert(1)</script><a xlink:href="javascript:alert(1)">x</a></svg>ok'],
    ['iframe srcdoc', '<iframe srcdoc="<script>alert(1)</script>"></iframe>ok'],
    ['meta refresh', '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">ok'],
    ['base and form', '<base href="https://evil.test/"><form action="https://evil.test"><input name=a><button>go</button></form>ok'],
    ['style url', '<div style="background:url(https://evil.test/p.gif)">ok</div>'],
    ['css escape', '<div style="background:u\\72l(https://evil.test/p.gif)">ok</div>'],
    ['object', '<object data="x.swf"><embed src="x.swf"></object>ok'],
    ['comment hiding a tag', '<!--><script>alert(1)</script>-->ok'],
  ])('%s: nothing that runs or fetches survives', (_, input) => {
    const { html } = safeReplyHtml(input, off);
    expect(html).not.toMatch(/<script|<iframe|<svg|<object|<embed|<meta|<base|<form|<input|javascript:|url\(|\son[a-z]+=|\\72/i);
    expect(html).toContain('ok');
  });

  it('an attribute value cannot break out of its quotes', () => {
    expect(safeReplyHtml('<img alt="&quot; onerror=&quot;alert(1)" src="data:image/png;base64,AA">', off).html).toBe('<img alt="&quot; onerror=&quot;alert(1)" src="data:image/png;base64,AA">');
  });

  it('blocks remote images unless asked, keeps inline ones, counts the blocked', () => {
    const input = '<img src="https://track.test/p.gif" alt="logo"><img src="data:image/png;base64,AA"><img src="cid:part1">';
    const blocked = safeReplyHtml(input, off);
    expect(blocked.blockedImages).toBe(1);
    expect(blocked.html).not.toContain('track.test');
    expect(blocked.html).toContain('data:image/png;base64,AA');
    expect(blocked.html).not.toContain('cid:');
    const loaded = safeReplyHtml(input, { images: true });
    expect(loaded.blockedImages).toBe(0);
    expect(loaded.html).toContain('src="https://track.test/p.gif"');
  });

  it('folds the quoted history found by the ingest rule', () => {
    const r = safeReplyHtml('<div>Tuesday works.</div><div class="gmail_quote">On Mon, Ann wrote:<blockquote>Hello</blockquote></div>', off);
    expect(r.html).toBe('<div>Tuesday works.</div><details class="cadenza-quoted"><summary>Show quoted history</summary><div>On Mon, Ann wrote:<blockquote>Hello</blockquote></div></details>');
  });

  it('closes what a cut document leaves open and drops an unterminated tag', () => {
    expect(safeReplyHtml('<div><p>cut here <a href="https://a.test/x', off).html).toBe('<div><p>cut here </p></div>');
  });

  it('is linear on hostile input (a megabyte of "<div class=" without ">")', () => {
    const t = performance.now();
    safeReplyHtml('<div class='.repeat(100_000), off);
    safeReplyHtml('<svg>'.repeat(100_000), off);
    expect(performance.now() - t).toBeLessThan(2_000);
  });

  it('is linear on many dropped elements and on stray closing tags', () => {
    let t = performance.now();
    safeReplyHtml('<script></script>'.repeat(30_000), off);
    safeReplyHtml('<svg></svg>'.repeat(30_000), off);
    expect(performance.now() - t).toBeLessThan(2_000);
    t = performance.now();
    safeReplyHtml('<b>'.repeat(60_000) + '</i>'.repeat(60_000), off);
    expect(performance.now() - t).toBeLessThan(2_000);
  });
});

describe('the frame document', () => {
  it('forbids scripts and, unless asked, remote images', () => {
    expect(frameCsp(off)).toContain("default-src 'none'");
    expect(frameCsp(off)).not.toMatch(/script-src|https:/);
    expect(frameCsp(off)).toMatch(/sandbox allow-popups allow-popups-to-escape-sandbox$/);
    expect(frameCsp({ images: true })).toContain('img-src data: https: http:');
    const doc = replyFrameDocument('<p>Hi</p>', off);
    expect(doc).toContain('content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; img-src data:; base-uri &#39;none&#39;; form-action &#39;none&#39;"');
    expect(doc).toContain('<body><p>Hi</p></body>');
  });
});
