import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReplyAnalysis } from './index.ts';
import { replyTextFromFile } from './from-file.ts';
import { CORPORA } from '../../../test/corpora/location.ts';

/**
 * The replyparse corpus (crisp, github, talon fixtures with the upstream tests' expectations; see
 * the corpora README): how many `expected_reply` texts `cadenza reply-text`'s code path reproduces,
 * per upstream, and how many of the other upstream assertions hold (informational: they test
 * upstream's own fragment model, which Cadenza only approximates).
 */

const LABELS = path.join(CORPORA, 'replyparse-labels.jsonl');
const present = existsSync(LABELS);

interface Assertion {
  op: string;
  index?: number;
  trim?: boolean;
  expected?: unknown;
  regex?: string;
  js_flags?: string;
  flag?: 'quoted' | 'signature' | 'hidden';
  cmp?: string;
}
interface Label {
  file: string;
  sender?: string;
  expected_reply: { text: string; compare: 'exact' | 'trim' | 'strip' | 'ignore_whitespace'; from: string } | null;
  assertions: Assertion[];
}

/**
 * Which of Cadenza's outputs an upstream expectation describes. talon's extract_from_plain/html
 * strip quotations only, so their expected texts keep the signature; crisp's and github's first
 * fragment and visible text, and talon's text_without_signature, leave it out.
 */
function outputFor(from: string, a: ReplyAnalysis): string {
  return from === 'plain_reply_equals' || from === 'html_reply_text_equals' ? a.withSignature : a.text;
}

function same(actual: string, expected: string, compare: string): boolean {
  switch (compare) {
    case 'exact':
      // Upstream fragments end with the line's newline; Cadenza's text does not.
      return actual === expected || actual === expected.replace(/\n+$/, '');
    case 'trim':
    case 'strip':
      return actual.trim() === expected.trim();
    case 'ignore_whitespace':
      return actual.replace(/\s+/g, '') === expected.replace(/\s+/g, '');
    default:
      return false;
  }
}

function check(a: Assertion, r: ReplyAnalysis): boolean {
  const frags = r.fragments;
  const f = a.index !== undefined ? frags[a.index] : undefined;
  const fragText = (x: typeof f) => (x === undefined ? undefined : a.trim ? x.content.trim() : x.content);
  switch (a.op) {
    case 'fragment_equals':
      return f !== undefined && same(fragText(f)!, String(a.expected), a.trim ? 'trim' : 'exact');
    case 'fragment_matches':
    case 'fragment_not_matches': {
      if (f === undefined) return a.op === 'fragment_not_matches';
      const hit = new RegExp(a.regex!, a.js_flags ?? '').test(fragText(f)!);
      return a.op === 'fragment_matches' ? hit : !hit;
    }
    case 'fragment_contains':
      return f !== undefined && f.content.includes(String(a.expected));
    case 'fragment_count':
      return a.cmp === '>=' ? frags.length >= Number(a.expected) : frags.length === Number(a.expected);
    case 'fragment_flag':
      return f !== undefined && f[a.flag!] === a.expected;
    case 'fragment_flags':
      return JSON.stringify(frags.map((x) => x[a.flag!])) === JSON.stringify(a.expected);
    case 'no_fragment_flag':
      return frags.every((x) => x[a.flag!] === a.expected);
    case 'any_fragment_flag':
      return frags.some((x) => x[a.flag!] === a.expected);
    case 'visible_text_equals':
      return same(r.text, String(a.expected), a.trim ? 'trim' : 'exact');
    case 'quoted_text_matches':
      return new RegExp(a.regex!, a.js_flags ?? '').test(r.quoted);
    case 'quoted_text_nonempty':
      return r.quoted.trim() !== '';
    case 'plain_reply_equals':
      return same(r.withSignature, String(a.expected), 'exact');
    case 'html_reply_text_equals':
      return same(r.withSignature, String(a.expected), 'ignore_whitespace');
    case 'signature_equals':
      return same(r.signature ?? '', String(a.expected), 'strip');
    case 'text_without_signature_equals':
      return same(r.text, String(a.expected), 'strip');
    default:
      return false;
  }
}

describe.skipIf(!present)('replyparse corpus (reply-text code path)', () => {
  it('reproduces at least 90% of the expected replies exactly', async () => {
    const labels = readFileSync(LABELS, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Label);
    const per = new Map<string, { ok: number; n: number; assertOk: number; assertN: number; misses: string[] }>();
    for (const label of labels) {
      const upstream = label.file.split('/')[1]!;
      const row = per.get(upstream) ?? { ok: 0, n: 0, assertOk: 0, assertN: 0, misses: [] };
      per.set(upstream, row);
      const { row: out, analysis } = await replyTextFromFile(path.join(CORPORA, label.file), { from: label.sender || null });
      expect(out.error).toBeUndefined();
      if (!analysis) continue;
      if (label.expected_reply) {
        row.n++;
        const e = label.expected_reply;
        if (same(outputFor(e.from, analysis), e.text, e.compare)) row.ok++;
        else row.misses.push(path.basename(label.file));
      }
      for (const a of label.assertions) {
        row.assertN++;
        if (check(a, analysis)) row.assertOk++;
      }
    }
    let ok = 0;
    let n = 0;
    const lines: string[] = [];
    for (const [upstream, r] of [...per].sort()) {
      ok += r.ok;
      n += r.n;
      lines.push(`  ${upstream.padEnd(7)} expected_reply ${r.ok}/${r.n}, other assertions ${r.assertOk}/${r.assertN}${r.misses.length ? `; missed: ${r.misses.join(', ')}` : ''}`);
    }
    console.log(`replyparse: ${ok}/${n} expected replies reproduced (${((100 * ok) / n).toFixed(1)}%)\n${lines.join('\n')}`);
    expect(n).toBeGreaterThan(0);
    expect(ok / n).toBeGreaterThanOrEqual(0.9);
  });

  // Another upstream's expectations, informational: Discourse's accepted replies with the post
  // text it keeps after its own quote and signature trimming (autoreply-ext, human_reply rows).
  it.skipIf(!existsSync(path.join(CORPORA, 'autoreply-ext-labels.jsonl')))('prints the agreement with Discourse on its human replies', async () => {
    const rows = readFileSync(path.join(CORPORA, 'autoreply-ext-labels.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { file: string; label: string; expected_reply: string | null })
      .filter((r) => r.label === 'human_reply' && r.expected_reply);
    let ok = 0;
    const misses: string[] = [];
    for (const r of rows) {
      const { row } = await replyTextFromFile(path.join(CORPORA, r.file));
      if (row.text === r.expected_reply) ok++;
      else misses.push(path.basename(r.file));
    }
    console.log(`autoreply-ext (Discourse human replies): ${ok}/${rows.length} expected post texts reproduced${misses.length ? `; missed: ${misses.join(', ')}` : ''}`);
    expect(rows.length).toBeGreaterThan(0);
  });
});
