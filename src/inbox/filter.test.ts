import { describe, expect, it } from 'vitest';
import { searchQuery } from './filter.ts';

describe('searchQuery', () => {
  it('makes every word a required prefix', () => {
    expect(searchQuery('Dana ACME')).toBe('dana:* & acme:*');
    expect(searchQuery('dana.ross@globex.test')).toBe('dana:* & ross:* & globex:* & test:*');
    expect(searchQuery('Zoë Müller 2026')).toBe('zoë:* & müller:* & 2026:*');
  });

  it('lets no tsquery operator through, and holds no word: no search', () => {
    expect(searchQuery("a&b|!c:*(d)'e")).toBe('a:* & b:* & c:* & d:* & e:*');
    expect(searchQuery("&|!:*()' ")).toBeNull();
    expect(searchQuery('')).toBeNull();
    expect(searchQuery(undefined)).toBeNull();
  });

  it('is bounded: 8 words of 40 characters at most', () => {
    expect(searchQuery('w '.repeat(20))!.split(' & ')).toHaveLength(8);
    expect(searchQuery('x'.repeat(100))).toBe(`${'x'.repeat(40)}:*`);
  });
});
