import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowed } from './allowed.ts';
import { regexesIn, sourceFiles, type FoundRegex } from './extract.ts';

/**
 * A scan of the source for regular expressions that can take super-linear time (ReDoS) on the
 * code that reads untrusted input: inbound mail (src/ingest), what the sending side reads back
 * (src/sending/compose: unsubscribe tokens; src/sequence/template and src/common/html.ts: templates)
 * provider answers (src/mailbox/sync), and imported phone numbers (src/leads/phone.ts).
 * recheck decides each pattern (its native binary when the platform's package is installed, its
 * JavaScript build otherwise; both ship in the npm packages, nothing is downloaded). A pattern it
 * finds vulnerable, cannot decide, or cannot see (built at run time) must be in allowed.ts with
 * the bound that makes it safe where it runs; an entry that no longer matches anything fails too.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
/** Folders, and single files of a folder that otherwise reads nothing untrusted. */
const DIRS = ['src/ingest', 'src/sending/compose', 'src/sequence/template', 'src/common/html.ts', 'src/mailbox/sync', 'src/leads/phone.ts'];

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
    const found: FoundRegex[] = [];
    for (const dir of DIRS) {
      for (const file of sourceFiles(path.join(ROOT, dir))) {
        for (const r of regexesIn(file, ROOT)) {
          found.push(r);
          if (r.source === null) {
            flagged.push({ ...r, verdict: 'dynamic', summary: 'built at run time' });
            continue;
          }
          // A short budget first; an undecided pattern in a file without an "unknown" entry gets a
          // longer one, so that a slow machine does not turn a decidable pattern into a failure.
          let d = checkSync(r.source, r.flags, { timeout: 400, randomSeed: 20261201 });
          if (d.status === 'unknown' && !allowed.some((a) => a.file === r.file && a.pattern === undefined)) d = checkSync(r.source, r.flags, { timeout: 5000, randomSeed: 20261201 });
          if (d.status === 'vulnerable') flagged.push({ ...r, verdict: 'vulnerable', summary: d.complexity.summary });
          else if (d.status === 'unknown') flagged.push({ ...r, verdict: 'unknown', summary: 'undecided' });
        }
      }
    }
    // An entry naming a pattern covers it whatever the verdict (recheck's budget can turn a
    // vulnerable verdict into an undecided one on a slower machine); a file's entry without a
    // pattern covers its undecided ones.
    const covers = (a: (typeof allowed)[number], f: FoundRegex) => a.file === f.file && a.pattern !== undefined && f.text.startsWith(a.pattern);
    const unexplained: string[] = [];
    for (const f of flagged) {
      const ok = allowed.some((a) => covers(a, f)) || (f.verdict === 'unknown' && allowed.some((a) => a.file === f.file && a.pattern === undefined));
      if (!ok) unexplained.push(`${f.file}:${f.line} ${f.verdict} (${f.summary}): ${f.text.slice(0, 120)}`);
    }
    // An entry whose pattern is no longer in the source (or whose file has no regex left) is stale.
    const stale = allowed.filter((a) => (a.pattern === undefined ? !found.some((f) => f.file === a.file) : !found.some((f) => covers(a, f)))).map((a) => `${a.file} ${a.pattern ?? ''}`);
    console.log(`ReDoS scan: ${found.length} patterns, ${flagged.length} allowed with a bound, backend ${process.env.RECHECK_BACKEND}`);
    expect(found.length).toBeGreaterThan(100);
    expect(unexplained).toEqual([]);
    expect(stale).toEqual([]);
  });
});
