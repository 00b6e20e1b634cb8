import { describe, expect, it } from 'vitest';
import { stripTags } from './html-to-text.ts';

/** The out-of-office rung's fallback reading of HTML (tags off, words kept), linear on any input. */
describe('stripTags', () => {
  it('drops closed script and style blocks, keeps the words of an unclosed one', () => {
    expect(stripTags('<style>p{}</style><p>I am out of the office</p>').trim()).toBe('I am out of the office');
    expect(stripTags('<script>x()</script >back Monday').trim()).toBe('back Monday');
    expect(stripTags('<style>p{} I am away until June 1').trim()).toBe('p{} I am away until June 1');
  });

  it('keeps a "<" with no ">" after it as text, and decodes entities', () => {
    expect(stripTags('a < b &amp; c')).toBe('a < b & c');
    expect(stripTags('<b>x</b>&nbsp;y')).toBe(' x  y');
  });

  it('is linear on a megabyte of tag openers (the regexes it replaced took minutes)', () => {
    for (const unit of ['<script', '<a href="', '<style>', '<div ']) {
      const t0 = performance.now();
      stripTags(unit.repeat(Math.floor(1_000_000 / unit.length)));
      expect(performance.now() - t0, unit).toBeLessThan(1000);
    }
  });
});
