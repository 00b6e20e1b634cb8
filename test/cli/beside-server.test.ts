import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, root, startServer, userEnv as env } from './server-process.ts';

/**
 * Ids, instants and durations differ from one run to the next, and so does the order of rows
 * created in the same millisecond (their ids break the tie); everything else must read the same.
 * A journal row's detail is cut to the column's width, so where the cut falls depends on the raw
 * instants' lengths (fractions of a second): the detail is compared up to its event. How many
 * timers fall in "the next hour" depends on when each store enrolled and on each step's drawn
 * jitter, so near the hour's edge the two runs may count differently: the count is not compared.
 */
const normalize = (s: string) =>
  sortLines(s.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)/g, '<instant>').replace(/in \d+\.\d s/g, 'in <n> s').replace(/"durationMs": \d+/g, '"durationMs": <n>').replace(/("event":).*$/gm, '$1…').replace(/\d+ in the next hour/g, '<n> in the next hour').replace(/"nextHour": \d+/g, '"nextHour": <n>'));
const sortLines = (s: string) => s.split('\n').sort().join('\n');

function cadenza(cwd: string, args: string[]) {
  const r = spawnSync(process.execPath, [cli, '--data-dir', join(cwd, 'data'), ...args], { cwd, env, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: normalize(r.stdout), stderr: normalize(r.stderr) };
}

/** The command on a terminal (script(1) gives it one), where the import draws its progress bar. */
function onTerminal(cwd: string, args: string[]): string {
  const line = [process.execPath, cli, '--data-dir', join(cwd, 'data'), ...args].map((a) => `'${a}'`).join(' ');
  return spawnSync('script', ['-qec', line, '/dev/null'], { cwd, env, encoding: 'utf8', timeout: 120_000 }).stdout;
}

function workspaceFolder(parent: string, name: string): string {
  const cwd = join(parent, name);
  mkdirSync(cwd);
  writeFileSync(join(cwd, 'leads.csv'), 'E-mail,First name,Company,Time zone,Country\nann@a.test,Ann,A,America/Chicago,US\nbob@b.test,Bob,B,Europe/Berlin,Germany\nnot-an-email,X,Y,,\ncat@c.test,Cat,C,Mars/Olympus,US\n');
  const many = ['email,first_name', ...Array.from({ length: 3000 }, (_, i) => `p${i}@many.test,P${i}`)].join('\n');
  writeFileSync(join(cwd, 'many.csv'), `${many}\n`);
  return cwd;
}

// Issue 11: with the embedded store, every command was refused while `cadenza start` ran.
describe('commands beside a running server on the embedded store', { timeout: 300_000 }, () => {
  let parent: string;
  let server: ChildProcess | undefined;
  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), 'cadenza-beside-'));
  });
  afterAll(() => {
    try {
      if (server?.pid) process.kill(server.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    rmSync(parent, { recursive: true, force: true });
  });

  it('run through the server, with the same output and exit codes as on their own', async () => {
    const alone = workspaceFolder(parent, 'alone');
    const beside = workspaceFolder(parent, 'beside');
    expect(cadenza(alone, ['migrate']).code).toBe(0);
    // The API role alone: no scheduler moves the enrollments while the two runs are compared.
    server = (await startServer(join(beside, 'data'), ['--roles', 'api'], { cwd: beside })).child;
    expect(existsSync(join(beside, 'data', 'db.endpoint'))).toBe(true);

    const steps = [
      ['migrate'],
      ['--json', 'mailbox', 'add', 'rep@acme.com', '--zone', 'America/New_York'],
      ['import', 'leads.csv'],
      ['--json', 'import', 'leads.csv', '--on-duplicate', 'update'],
      ['sequence', 'apply', join(root, 'examples', 'outbound.yaml')],
      ['enroll', '--sequence', 'outbound', '--all'],
      ['status'],
      ['--json', 'status'],
      ['enrollments', 'list'],
      ['enrollments', 'show', 'ann@a.test'],
      ['--json', 'enrollments', 'list', '--state', 'active', '--lead', 'bob@b.test'],
      ['workspace', 'list'],
      ['mailbox', 'list'],
      ['enroll', '--sequence', 'nope', '--all'],
      ['enrollments', 'list', '--state', 'sleeping'],
      ['--json', 'enrollments', 'show', 'nobody@x.test'],
    ];
    for (const args of steps) {
      const a = cadenza(alone, args);
      const b = cadenza(beside, args);
      expect(b, `cadenza ${args.join(' ')}`).toEqual(a);
    }
    // Nothing was refused: the commands above did what they say, in the server's store.
    expect(cadenza(beside, ['--json', 'status']).stdout).toMatch(/"leads": 3/);

    // A long import on a terminal draws its progress bar, as it does on its own.
    for (const cwd of [alone, beside]) {
      const out = onTerminal(cwd, ['import', 'many.csv']);
      expect(out).toMatch(/importing \[/);
      expect(out).toMatch(/read 3000 row\(s\) in [\d.]+ s: 3000 imported/);
    }

    // Stopped, the server takes its endpoint away; the next command opens the folder itself.
    server.kill('SIGTERM');
    await new Promise((r) => server!.once('exit', r));
    expect(existsSync(join(beside, 'data', 'db.endpoint'))).toBe(false);
    expect(cadenza(beside, ['--json', 'status']).stdout).toMatch(/"leads": 3003/);
  });
});
