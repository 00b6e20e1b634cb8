import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvCell, csvRecord, restoreFormulaText } from './csv-write.ts';

describe('writing CSV', () => {
  it('neutralises cells a spreadsheet would run as formulas', () => {
    for (const c of ['=1+1', '+1', '-1', '@A1', '\t=1', '\r=1']) expect(csvCell(c).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell('a=1')).toBe('a=1');
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
  });

  it('reads back exactly as written once the neutralised cells are restored, whatever the cells', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.string({ maxLength: 12 }), { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 5 }), (rows) => {
        // A first cell of its own, so that no record is an empty line.
        const text = rows.map((r) => csvRecord(['x', ...r])).join('');
        const back = (parse(text, { trim: false }) as string[][]).map((r) => r.slice(1).map(restoreFormulaText));
        expect(back).toEqual(rows);
      }),
    );
  });

  it('is the only CSV writer: no other source file quotes CSV cells by hand', () => {
    const root = join(import.meta.dirname, '..');
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.test.ts') && !p.endsWith('csv-write.ts')) {
          if (readFileSync(p, 'utf8').includes(`replace(/"/g, '""')`)) offenders.push(p.slice(root.length + 1));
        }
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
  });
});
