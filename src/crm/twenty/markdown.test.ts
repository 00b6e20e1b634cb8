import { describe, expect, it } from 'vitest';
import { markdownText } from './markdown.ts';

/** Plain text written into Twenty's Markdown body must read back as the same text. */
describe('markdownText', () => {
  it('escapes what would open a block at a line start and what means something inside a line', () => {
    expect(markdownText('# not a heading\n> not a quote\n- not a list\n1. not ordered\n    not code')).toBe(
      '\\# not a heading\\\n\\> not a quote\\\n\\- not a list\\\n1\\. not ordered\\\nnot code',
    );
    expect(markdownText('a *b* _c_ [d](e) <b>f</b> `g` h|i ~j~ &amp; \\k')).toBe(
      'a \\*b\\* \\_c\\_ \\[d\\](e) \\<b\\>f\\</b\\> \\`g\\` h\\|i \\~j\\~ \\&amp; \\\\k',
    );
  });

  it('keeps line breaks as hard breaks and blank lines as paragraph breaks', () => {
    expect(markdownText('Hi Jane,\r\nthanks.\n\n\nBest,\nBob\n')).toBe('Hi Jane,\\\nthanks.\n\nBest,\\\nBob');
    expect(markdownText('  \n\n')).toBe('');
  });
});
