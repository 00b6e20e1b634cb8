/**
 * How long `cadenza` takes to answer, as a user runs it (a new process each time):
 *
 *   npm run bench -- cli-startup [--runs=7]
 *
 * Cases, run in interleaved rounds so that a change of load touches every series alike:
 *   anchor            `node -e 0`: the floor any Node command pays on this machine now
 *   help              `cadenza --help` (the build in dist/, commander alone)
 *   status            `cadenza status` on an embedded store of its own (opens PGlite: its WebAssembly
 *                     and the database's start-up are most of it)
 *   status-beside     `cadenza status` beside a running `cadenza start` (through the server's store)
 *   help-from-source  `cadenza --help` with src/ compiled on the fly by tsx, as every command ran
 *                     before the build at install (CADENZA_FROM_SOURCE=1)
 * Per case: median and min–max wall time in ms, and the median as a multiple of the anchor's.
 * The one-minute load average before and after is printed too: on a loaded machine every figure
 * grows, the ratios much less.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIsCurrent } from '../scripts/src-build.mjs';
import { intFlag } from './lib/args.ts';
import { round } from './lib/format.ts';
import { median } from './lib/stats.ts';

const root = join(import.meta.dirname, '..');
const cli = join(root, 'bin', 'cadenza.js');
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && k !== 'CADENZA_DATA_DIR'));

function timed(args: string[], extraEnv: Record<string, string> = {}): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env: { ...env, ...extraEnv }, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  return ms;
}

export default async function cliStartup(args: string[]): Promise<Record<string, unknown>> {
  const runs = intFlag(args, 'runs', 7);
  if (!buildIsCurrent(root)) {
    console.log('dist/ is older than src/: npm run build:src');
    const b = spawnSync('npm', ['run', '-s', 'build:src'], { cwd: root, stdio: 'inherit' });
    if (b.status !== 0) throw new Error('the build failed');
  }
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-bench-cli-'));
  const own = join(dir, 'own');
  const served = join(dir, 'served');
  timed([cli, '--data-dir', own, 'migrate']);
  const server = spawn(process.execPath, [cli, '--data-dir', served, 'start', '--port', '0', '--host', '127.0.0.1', '--roles', 'api'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let log = '';
    server.stdout.on('data', (b: Buffer) => (log += b.toString()));
    await new Promise<void>((resolve, reject) => {
      const t = setInterval(() => {
        if (log.includes('cadenza is running')) resolve();
        else if (server.exitCode !== null) reject(new Error(`the server did not start: ${log}`));
        else return;
        clearInterval(t);
      }, 100);
    });
    const cases: Record<string, () => number> = {
      anchor: () => timed(['-e', '0']),
      help: () => timed([cli, '--help']),
      status: () => timed([cli, '--data-dir', own, 'status']),
      'status-beside': () => timed([cli, '--data-dir', served, 'status']),
      'help-from-source': () => timed([cli, '--help'], { CADENZA_FROM_SOURCE: '1' }),
    };
    const loadBefore = loadavg()[0]!;
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (const fn of Object.values(cases)) fn(); // warm the page cache and tsx's cache
    for (let r = 0; r < runs; r++) for (const [k, fn] of Object.entries(cases)) times[k]!.push(fn());
    const loadAfter = loadavg()[0]!;

    const anchor = median(times.anchor!);
    const figures: Record<string, unknown> = { runs, load_before: round(loadBefore, 2), load_after: round(loadAfter, 2) };
    console.log(`${runs} runs each, interleaved; load average ${round(loadBefore, 2)} before, ${round(loadAfter, 2)} after`);
    for (const [k, xs] of Object.entries(times)) {
      const m = median(xs);
      const key = k.replace(/-/g, '_');
      console.log(`  ${k.padEnd(17)} median ${round(m, 0)} ms (${round(Math.min(...xs), 0)}–${round(Math.max(...xs), 0)})${k === 'anchor' ? '' : ` = ${round(m / anchor, 1)}x anchor`}`);
      figures[`${key}_median_ms`] = round(m, 0);
      figures[`${key}_min_ms`] = round(Math.min(...xs), 0);
      figures[`${key}_max_ms`] = round(Math.max(...xs), 0);
      if (k !== 'anchor') figures[`${key}_x_anchor`] = round(m / anchor, 2);
    }
    return figures;
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}
