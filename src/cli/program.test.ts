import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, Help } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { commandName, commands } from './commands/index.ts';
import { buildIsCurrent } from '../../scripts/src-build.mjs';
import { buildProgram, commandOnLine } from './program.ts';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'cadenza-program-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The modules a real `cadenza …` process loads, recorded by a resolve hook registered before
 * bin/cadenza.js runs (node:module register), as file or package URLs.
 */
function modulesLoadedBy(args: string[], env: Record<string, string> = {}): string[] {
  const log = join(dir, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }\n`);
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, join(root, 'bin', 'cadenza.js'), ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  return readFileSync(log, 'utf8').trim().split('\n');
}
const packages = (urls: string[]) => new Set(urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1]).filter(Boolean));

describe('the cadenza program', () => {
  it('lists every command as the command itself would be listed', async () => {
    const listed = (await buildProgram([])).helpInformation();
    const loaded = await buildProgram(commands);
    expect(listed).toBe(loaded.helpInformation());
    for (const entry of commands) {
      const real = new Command('cadenza');
      (await entry.load()).register(real);
      expect(real.commands.map((c) => new Help().subcommandTerm(c)), entry.usage).toEqual([entry.usage]);
    }
  });

  it('finds the command on the line past the global options', () => {
    const name = (args: string[]) => {
      const e = commandOnLine(args);
      return e ? commandName(e) : undefined;
    };
    expect(name(['--data-dir', 'status', 'import', 'x.csv'])).toBe('import');
    expect(name(['--json', '--database-url=postgres://x', 'status'])).toBe('status');
    expect(name(['help', 'enrollments'])).toBe('enrollments');
    expect(name(['--help'])).toBeUndefined();
    expect(name(['stauts'])).toBeUndefined();
  });

  // Issue 11: every command loaded the whole server (fastify, the mail connectors) before it ran.
  it('loads only what the command on the line needs', { timeout: 240_000 }, () => {
    // Compiled at install (dist/); from source (a build older than src/), tsx compiles on the fly.
    const runner = ['tsx', 'esbuild', 'get-tsconfig', 'resolve-pkg-maps'];
    const help = packages(modulesLoadedBy(['--help']));
    expect([...help].filter((p) => buildIsCurrent(root) || !runner.includes(p!))).toEqual(['commander']);
    const fromSource = packages(modulesLoadedBy(['--help'], { CADENZA_FROM_SOURCE: '1' }));
    expect(fromSource.has('tsx')).toBe(true);
    const status = packages(modulesLoadedBy(['--data-dir', join(dir, 'data'), 'status']));
    for (const heavy of ['fastify', 'imapflow', 'nodemailer', 'date-holidays', 'postal-mime']) expect(status.has(heavy), heavy).toBe(false);
  });
});
