import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowed } from './allowed.ts';
import { regexesIn, sourceFiles, type FoundRegex } from './extract.ts';

/**
 * A scan of the source for regular expressions that can take super-linear time (ReDoS) on the
 * code that reads untrusted input: inbound mail (src/ingest), what the sending side reads back
 * (src/sending/compose: templates, unsubscribe tokens) and provider answers (src/mailbox/sync).
 * recheck decides each pattern (its native binary when the platform's package is installed, its
 * JavaScript build otherwise; both ship in the npm packages, nothing is downloaded). A pattern it
 * finds vulnerable, cannot decide, or cannot see (built at run time) must be in allowed.ts with
 * the bound that makes it safe where it runs; an entry that no longer matches anything fails too.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const DIRS = ['src/ingest', 'src/sending/compose', 'src/mailbox/sync'];

function backend(): 'native' | 'pure' {
  try {
    createRequire(import.meta.url).resolve(`recheck-${process.platform === 'darwin' ? 'macos' : process.platform}-${process.arch}/package.json`);
    return 'native';
  } catch {
    return 'pure';
  }
}

type Verdict = 'vulnerable' | 'unknown' | 'dynamic';

describe('no super-linear regular expression on untrusted input', () => {
  it('every pattern is safe, or allowed with its bound', { timeout: 240_000 }, async () => {
    process.env.RECHECK_BACKEND = backend();
    const { checkSync } = await import('recheck');
    const flagged: Array<FoundRegex & { verdict: Verdict; summary: string }> = [];
    let checked = 0;
    for (const dir of DIRS) {
      for (const file of sourceFiles(path.join(ROOT, dir))) {
        for (const r of regexesIn(file, ROOT)) {
          checked++;
          if (r.source === null) {
            flagged.push({ ...r, verdict: 'dynamic', summary: 'built at run time' });
            continue;
          }
          const d = checkSync(r.source, r.flags, { timeout: 400 });
          if (d.status === 'vulnerable') flagged.push({ ...r, verdict: 'vulnerable', summary: d.complexity.summary });
          else if (d.status === 'unknown') flagged.push({ ...r, verdict: 'unknown', summary: 'undecided' });
        }
      }
    }
    const used = new Set<number>();
    const unexplained: string[] = [];
    for (const f of flagged) {
      const i = allowed.findIndex((a) => a.file === f.file && (a.pattern === undefined ? f.verdict === 'unknown' : f.text.startsWith(a.pattern)));
      if (i >= 0) used.add(i);
      else unexplained.push(`${f.file}:${f.line} ${f.verdict} (${f.summary}): ${f.text.slice(0, 120)}`);
    }
    const stale = allowed.filter((_, i) => !used.has(i)).map((a) => `${a.file} ${a.pattern ?? '(unknown verdicts)'}`);
    console.log(`ReDoS scan: ${checked} patterns, ${flagged.length} allowed with a bound, backend ${process.env.RECHECK_BACKEND}`);
    expect(checked).toBeGreaterThan(100);
    expect(unexplained).toEqual([]);
    expect(stale).toEqual([]);
  });
});
