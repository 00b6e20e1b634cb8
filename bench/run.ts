/**
 * Benchmark runner.
 *
 *   npm run bench -- NAME [--flag=value ...]      runs bench/NAME.ts
 *   npm run bench                                  lists the benchmarks
 *
 * Convention for a benchmark (one file per benchmark, bench/NAME.ts; this folder is the registry):
 *   - It exports `default async function (args: string[]): Promise<Record<string, unknown>>`.
 *     args are the command-line arguments after NAME (parse `--name=value` with bench/lib/args.ts).
 *   - It prints readable figures while it runs (console.log) and returns the figures as a flat
 *     object of JSON values (numbers rounded, units in the key: `insert_ns_per_op`, `bytes_per_timer`).
 *   - The runner prints, as the LAST line of stdout, `{"bench": NAME, ...figures}`, so a script can
 *     take `npm run bench -- NAME | tail -n 1`.
 *   - Shared helpers live in bench/lib/: time.ts (process.hrtime.bigint), stats.ts (percentile),
 *     format.ts (numbers for people), memory.ts (retained bytes after full GCs), args.ts (flags),
 *     rounds.ts (figures that hold up: the machine's load before and after, interleaved rounds,
 *     median and min–max, ratios to an anchor taken round by round). Every benchmark prints the
 *     load before and after and reports medians with their spread (rounds.ts).
 *
 * Memory figures need global.gc, so the runner re-executes itself once under `node --expose-gc`
 * with tsx's loader flags (process.execArgv) kept, and with the soft open-file limit raised to the
 * hard one. Exit status: 0 on success (and for the list),
 * 1 on an unknown name or a failing benchmark.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type Benchmark = (args: string[]) => Promise<Record<string, unknown>>;

const here = dirname(fileURLToPath(import.meta.url));
const REEXEC_ENV = 'CADENZA_BENCH_REEXEC';
// Benchmarks drive the local mail bed on 127.0.0.1, which the mail-host policy refuses unless
// told (mailbox/mail-hosts.ts); the re-executed child inherits it.
process.env.CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS ??= 'true';

function available(): string[] {
  return readdirSync(here)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

function usage(): string {
  return `usage: npm run bench -- NAME [--flag=value ...]\nbenchmarks: ${available().join(', ') || '(none)'}`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    console.log(usage());
    return 0;
  }
  if (!available().includes(name)) {
    console.error(`unknown benchmark: ${name}\n${usage()}`);
    return 1;
  }

  if (typeof (globalThis as { gc?: unknown }).gc !== 'function' && process.env[REEXEC_ENV] !== '1') {
    // process.execArgv holds tsx's --require/--import loader flags, so the child runs TypeScript too.
    const node = [process.execPath, ...process.execArgv, '--expose-gc', fileURLToPath(import.meta.url), ...argv];
    // Through a shell where there is one: the soft limit on open files goes up to the hard one
    // (imap-idle holds a socket per watched mailbox; the soft default is often 1,024).
    const child =
      process.platform === 'win32'
        ? spawnSync(node[0]!, node.slice(1), { stdio: 'inherit', env: { ...process.env, [REEXEC_ENV]: '1' } })
        : spawnSync('/bin/sh', ['-c', 'ulimit -S -n "$(ulimit -H -n)" 2>/dev/null; exec "$@"', 'sh', ...node], { stdio: 'inherit', env: { ...process.env, [REEXEC_ENV]: '1' } });
    if (child.error) throw child.error;
    return child.status ?? 1;
  }
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
    console.error('warning: global.gc is unavailable; memory figures will be NaN');
  }

  const mod = (await import(pathToFileURL(join(here, `${name}.ts`)).href)) as { default?: unknown };
  if (typeof mod.default !== 'function') {
    console.error(`bench/${name}.ts has no default export function (see the convention in bench/run.ts)`);
    return 1;
  }
  const figures = await (mod.default as Benchmark)(args);
  const line: Record<string, unknown> = { bench: name, ...figures };
  line.bench = name; // first and authoritative, whatever the figures contain
  console.log(JSON.stringify(line));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  },
);
