import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildIsCurrent } from '../../../scripts/src-build.mjs';

/**
 * The pool as `bin/cadenza.js` runs it: from the compiled build in dist/ (scripts/build-src.mjs),
 * where no .ts file exists. Its thread entry and steps module must be the build's JavaScript; a
 * .ts name there failed every thread, and every message would have been quarantined as
 * worker_failed. Runs in a plain node process (no tsx loader) on the build npm install made; CI
 * installs afresh, so there the build must be current.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const current = buildIsCurrent(root);

describe('PreparePool from the compiled build', () => {
  it('is checked on a current build (CI installs one)', () => {
    if (process.env.CI) expect(current, 'dist/ is not a build of src/ as it is: npm run build:src').toBe(true);
  });

  it.skipIf(!current)('prepares a message in a thread of the compiled build, with no TypeScript loader', () => {
    const script = `
      const { PreparePool } = await import(${JSON.stringify(new URL('dist/ingest/worker/prepare-pool.js', `file://${root}`).href)});
      const pool = new PreparePool({ size: 1 });
      const raw = new TextEncoder().encode('From: Ann <ann@acme.test>\\r\\nTo: rep@cadenza.test\\r\\nSubject: Re: intro\\r\\nMessage-ID: <d@acme.test>\\r\\nDate: Mon, 1 Jun 2026 09:00:00 +0000\\r\\n\\r\\nYes, interested. Call me Thursday.\\r\\n');
      const r = await pool.prepare(raw);
      await pool.close();
      process.stdout.write(JSON.stringify({ ok: r.ok, label: r.ok ? r.classification.label : r.reason }));
    `;
    // A file, not --eval: the pool's threads inherit the process's flags.
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-dist-pool-'));
    try {
      writeFileSync(join(dir, 'run.mjs'), script);
      const out = execFileSync(process.execPath, [join(dir, 'run.mjs')], { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } });
      expect(JSON.parse(out)).toEqual({ ok: true, label: 'human_reply' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
