import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../stores.ts';
import { cadenza } from './cadenza-process.ts';

const root = join(import.meta.dirname, '..', '..');

// Each command is a new process (tsx + the store's start-up): generous timeouts on a loaded machine.
describe.each(testBackends())('the cadenza command on %s', { timeout: 240_000 }, (backend) => {
  let dir: string;
  let pg: TestStore | undefined;
  let store: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-cli-'));
    if (backend === 'postgres') {
      pg = await freshStore('postgres');
      await pg.close();
      store = ['--database-url', pg.url!];
    } else {
      store = ['--data-dir', join(dir, 'data')];
    }
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await pg?.destroy().catch(() => undefined);
  });

  it('goes from an empty store to enrolled leads, with --json everywhere', () => {
    const run = (...args: string[]) => cadenza([...store, '--json', ...args], { cwd: dir });
    expect(run('migrate').code).toBe(0);
    expect(run('mailbox', 'add', 'rep@acme.com', '--zone', 'America/New_York').code).toBe(0);

    writeFileSync(join(dir, 'leads.csv'), 'E-mail,First name,Company,Time zone,Country\nann@a.test,Ann,A,America/Chicago,US\nbob@b.test,Bob,B,Europe/Berlin,Germany\nnot-an-email,X,Y,,\nann@a.test,Ann again,A,,\n');
    const imp = run('import', 'leads.csv');
    expect(imp.code).toBe(0);
    expect(imp.json()).toMatchObject({ rowsRead: 4, imported: 2, rejected: 2 });
    const rejects = readFileSync(join(dir, 'leads.rejects.csv'), 'utf8');
    expect(rejects).toMatch(/invalid_email/);
    expect(rejects).toMatch(/duplicate_in_file/);

    const applied = cadenza([...store, '--json', 'sequence', 'apply', join(root, 'examples', 'outbound.yaml')], { cwd: dir });
    expect(applied.code).toBe(0);
    expect(applied.json()).toMatchObject({ created: true, added: ['intro', 'call', 'linkedin', 'bump'] });

    const enrolled = run('enroll', '--sequence', 'outbound', '--all');
    expect(enrolled.json()).toMatchObject({ enrolled: 2, refused: 0 });
    const again = run('enroll', '--sequence', 'outbound', '--lead', 'ann@a.test', '--lead', 'nobody@x.test', '--rejects', 'refused.csv');
    expect(again.json()).toMatchObject({ enrolled: 0, refused: 2, refusedByReason: { already_enrolled: 1, not_found: 1 } });
    expect(readFileSync(join(dir, 'refused.csv'), 'utf8')).toMatch(/nobody@x\.test,not_found/);

    const status = run('status');
    expect(status.json()).toMatchObject({ leads: 2, mailboxes: 1, sequences: 1, enrollments: { active: 2 } });
  });

  it('lists enrollments with filters and shows one with its steps and journal', () => {
    const run = (...args: string[]) => cadenza([...store, '--json', ...args], { cwd: dir });
    const all = run('enrollments', 'list');
    expect(all.code).toBe(0);
    expect(all.json().items.map((e: { lead: string }) => e.lead).sort()).toEqual(['ann@a.test', 'bob@b.test']);
    const one = run('enrollments', 'list', '--lead', 'ANN@a.test', '--state', 'active', '--sequence', 'outbound');
    expect(one.json()).toMatchObject({ items: [{ lead: 'ann@a.test', sequence: 'outbound', state: 'active', nextStep: 'intro', waitingFor: 'timer' }], more: false });

    const shown = run('enrollments', 'show', 'ann@a.test');
    expect(shown.code).toBe(0);
    expect(shown.json()).toMatchObject({ enrollment: { lead: 'ann@a.test', state: 'active' }, sends: [], events: [{ type: 'enrolled' }] });
    const byId = cadenza([...store, 'enrollments', 'show', shown.json().enrollment.id], { cwd: dir });
    expect(byId.stdout).toMatch(/ann@a\.test in outbound: active/);
    expect(byId.stdout).toMatch(/next: intro, waiting for timer, due /);

    const badState = cadenza([...store, 'enrollments', 'list', '--state', 'sleeping'], { cwd: dir });
    expect([badState.code, badState.stderr]).toEqual([2, expect.stringMatching(/--state must be one of active, paused/)]);
  });

  it('stores a mailbox password only encrypted, and rotates the master key', () => {
    const env = { CADENZA_MAILBOX_PASSWORD: 'pa55-word-never-logged' };
    const keyDir = join(dir, 'keys');
    const run = (...args: string[]) => cadenza([...store, '--data-dir', keyDir, '--json', ...args], { cwd: dir, env });
    const add = run('mailbox', 'add', 'smtp@acme.com', '--smtp-host', 'smtp.acme.com', '--imap-host', 'imap.acme.com', '--no-verify');
    expect(add.code).toBe(0);
    expect(add.stdout + add.stderr).not.toContain('pa55-word');
    expect(add.json()).toMatchObject({ credentials: 'stored encrypted' });
    const rotated = run('keys', 'rotate');
    expect(rotated.code).toBe(0);
    expect(rotated.json().rewrapped).toBeGreaterThanOrEqual(1);
    const noPassword = cadenza([...store, '--data-dir', keyDir, 'mailbox', 'add', 'other@acme.com', '--smtp-host', 'smtp.acme.com'], { cwd: dir, env: { CADENZA_MAILBOX_PASSWORD: '' } });
    expect(noPassword.code).toBe(2);
    expect(noPassword.stderr).toMatch(/needs its password/);
  });

  it('answers bad input with a clear error and a stable exit code, never a stack trace', () => {
    writeFileSync(join(dir, 'bad.yaml'), 'key: x\nname: y\nsteps:\n  - key: a\n    type: email\n    delay: soon\n');
    const bad = cadenza([...store, 'sequence', 'apply', 'bad.yaml'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/invalid sequence definition/);
    expect(bad.stderr).toMatch(/steps.0 \(a\).delay/);
    expect(bad.stderr).not.toMatch(/at .*\.ts:\d+/);

    const missing = cadenza([...store, '--json', 'import', 'nope.csv'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.json().error.code).toBe('INVALID_INPUT');

    const unknownSeq = cadenza([...store, 'enroll', '--sequence', 'nope', '--all'], { cwd: dir });
    expect(unknownSeq.code).toBe(3);
    expect(unknownSeq.stderr).toMatch(/sequence 'nope' not found/);

    const help = cadenza(['enroll', '--help'], { cwd: dir });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--sequence <key>/);
  });
  // Issue 10: pacing settable from the CLI, per workspace and per mailbox; apply warns about a
  // delay its mailboxes' gap would stretch; export gives back every field of the definition.
  it('sets pacing per workspace and per mailbox, warns on a delay under the gap, and exports the whole definition', () => {
    // The folder of the master-key test above: on PostgreSQL both tests share one database, whose
    // workspace keys that test wrapped with its master key (a command with another key is refused).
    const paceDir = join(dir, 'keys');
    const run = (...args: string[]) => cadenza([...store, '--data-dir', paceDir, '--json', ...args], { cwd: dir });
    const ws = run('workspace', 'pacing', '--daily-cap', '40', '--human-timing', 'off', '--days', 'mon-sat');
    expect(ws.code, ws.stderr).toBe(0);
    expect(ws.json().effective).toMatchObject({ dailyCap: 40, dayJitterMinutes: 0, lunch: null, pickupMinutes: 0, spreadDay: false, workDays: [1, 2, 3, 4, 5, 6] });
    const add = run('mailbox', 'add', 'pacer@acme.com', '--hourly-cap', '20', '--hours', '08:00-18:00', '--ramp', '5:3:30', '--no-verify');
    expect(add.code, add.stderr).toBe(0);
    const shown = run('mailbox', 'set', 'pacer@acme.com');
    expect(shown.json().effective).toMatchObject({ dailyCap: 40, hourlyCap: 20, ramp: { start: 5, step: 3, target: 30 }, dayStart: '08:00', dayEnd: '18:00', gapMinutes: [8, 15], workDays: [1, 2, 3, 4, 5, 6] });

    const file = join(dir, 'quick.yaml');
    writeFileSync(file, 'key: quick\nname: Quick\nholidays: false\ntrack_clicks: true\nstop_rules: { max_soft_bounces: 5 }\nmailboxes: [pacer@acme.com]\nsteps:\n  - { key: one, type: email, subject: Hi, body: Hello }\n  - { key: two, type: email, delay: 2 minutes, body: Again }\n');
    const applied = run('sequence', 'apply', file);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toMatch(/warning: step two: .*2 minutes.*pacer@acme\.com \(8 min-15 min\)/);
    expect(applied.json().warnings).toHaveLength(1);

    const set = run('mailbox', 'set', 'pacer@acme.com', '--gap-min', '30s', '--gap-max', '90s');
    expect(set.json().effective.gapMinutes).toEqual([0.5, 1.5]);
    expect(run('sequence', 'apply', file).json().warnings).toEqual([]);
    const bad = cadenza([...store, '--data-dir', paceDir, 'mailbox', 'set', 'pacer@acme.com', '--gap', '2m-1m'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/minimum may not be larger than the maximum/);

    const exported = cadenza([...store, '--data-dir', paceDir, 'sequence', 'export', 'quick'], { cwd: dir });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toMatch(/holidays: false/);
    expect(exported.stdout).toMatch(/track_clicks: true/);
    expect(exported.stdout).toMatch(/max_soft_bounces: 5/);
  });

  it('a first workspace takes the unused Default one; with several, a command without --workspace is refused with their names', () => {
    const fresh = backend === 'postgres' ? store : ['--data-dir', join(dir, 'fresh')];
    if (backend === 'pglite') {
      const first = cadenza([...fresh, '--json', 'workspace', 'create', 'Acme', '--zone', 'Europe/Berlin'], { cwd: dir });
      expect(first.json()).toMatchObject({ name: 'Acme', replaced: 'Default' });
      expect(cadenza([...fresh, '--json', 'status'], { cwd: dir }).json()).toMatchObject({ workspace: { name: 'Acme' } });
    }
    // The shared store's Default workspace holds this file's leads: a new one is added beside it.
    const second = cadenza([...store, '--json', 'workspace', 'create', 'Second'], { cwd: dir });
    expect(second.json()).not.toHaveProperty('replaced');
    const refused = cadenza([...store, 'status'], { cwd: dir });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/several workspaces; name one with --workspace <id\|name>: Default \(.*\), Second \(/);
    expect(cadenza([...store, '--json', 'status', '--workspace', 'Second'], { cwd: dir }).json()).toMatchObject({ workspace: { name: 'Second' }, leads: 0 });
  });
});
