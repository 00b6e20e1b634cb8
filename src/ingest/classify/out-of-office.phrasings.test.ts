import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyRaw } from '../classify-file.ts';

/**
 * The labelled set of out-of-office phrasings kept in the repository
 * (test/corpora/out-of-office-phrasings.json: auto-replies with the return date a reader takes
 * from them, and human replies that mention an absence, in seven languages), run through the
 * path `cadenza classify` takes. Two figures, asserted:
 *   - human replies read as auto-replies: at most 2%;
 *   - auto-replies read as auto-replies with the exact return date (or none where none is stated): at least 95%.
 */

interface Item {
  id: string;
  lang: string;
  kind: 'auto' | 'human';
  date: string;
  subject: string;
  headers: Record<string, string>;
  inReplyTo: boolean;
  body: string;
  returnDate?: string | null;
  /** 1: written before the rules were changed and used to change them; 2: written afterwards. */
  batch: number;
}

const FILE = path.join(import.meta.dirname, '..', '..', '..', 'test', 'corpora', 'out-of-office-phrasings.json');
const items = (JSON.parse(readFileSync(FILE, 'utf8')) as { items: Item[] }).items;

function message(item: Item): Uint8Array {
  const lines = [
    `From: Prospect <prospect.${item.lang}@acme.example>`,
    'To: Sam Rep <sam@vendor.example>',
    `Subject: ${item.subject}`,
    `Date: ${item.date}`,
    `Message-ID: <${item.id}@acme.example>`,
    ...(item.inReplyTo ? ['In-Reply-To: <pitch-1@vendor.example>', 'References: <pitch-1@vendor.example>'] : []),
    ...Object.entries(item.headers).map(([k, v]) => `${k}: ${v}`),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    item.body,
  ];
  return new TextEncoder().encode(lines.join('\r\n').replace(/(?<!\r)\n/g, '\r\n'));
}

describe('out-of-office phrasings (test/corpora/out-of-office-phrasings.json)', () => {
  it('reads at most 2% of human replies as auto-replies, and at least 95% of return dates exactly', { timeout: 60_000 }, async () => {
    const humans = items.filter((i) => i.kind === 'human');
    const autos = items.filter((i) => i.kind === 'auto');
    expect(humans.length + autos.length).toBeGreaterThanOrEqual(100);
    expect(new Set(items.map((i) => i.lang)).size).toBeGreaterThanOrEqual(5);
    const misses: string[] = [];
    let humanAsAuto = 0;
    let exact = 0;
    let detected = 0;
    for (const item of items) {
      const { row } = await classifyRaw(`${item.id}.eml`, message(item));
      const isAuto = row.label === 'auto_reply' || row.label === 'auto_generated';
      if (item.kind === 'human') {
        if (isAuto) {
          humanAsAuto++;
          misses.push(`${item.id}: human reply read as ${row.label} (${row.reason})`);
        }
        continue;
      }
      if (row.label === 'auto_reply') detected++;
      const got = row.return_date ?? null;
      if (row.label === 'auto_reply' && got === item.returnDate) exact++;
      else misses.push(`${item.id}: want auto_reply back ${item.returnDate ?? 'none'}, got ${row.label} back ${got ?? 'none'} (${row.reason})`);
    }
    const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
    for (const batch of [1, 2]) {
      const hs = humans.filter((i) => i.batch === batch).map((i) => i.id);
      const as = autos.filter((i) => i.batch === batch).map((i) => i.id);
      const hMiss = misses.filter((m) => hs.includes(m.split(':')[0]!)).length;
      const aMiss = misses.filter((m) => as.includes(m.split(':')[0]!)).length;
      console.log(`  batch ${batch}: human replies read as auto-replies ${hMiss}/${hs.length}, return date exact ${as.length - aMiss}/${as.length}`);
    }
    console.log(
      `out-of-office phrasings: ${items.length} items, ${new Set(items.map((i) => i.lang)).size} languages\n` +
        `  human replies read as auto-replies: ${humanAsAuto}/${humans.length} (${pct(humanAsAuto, humans.length)})\n` +
        `  auto-replies detected: ${detected}/${autos.length} (${pct(detected, autos.length)}); return date exact: ${exact}/${autos.length} (${pct(exact, autos.length)})` +
        (misses.length ? `\n  misses:\n    ${misses.join('\n    ')}` : ''),
    );
    expect(humanAsAuto / humans.length).toBeLessThanOrEqual(0.02);
    expect(exact / autos.length).toBeGreaterThanOrEqual(0.95);
  });
});
