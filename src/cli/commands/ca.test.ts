import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildProgram } from '../program.ts';
import { commands } from './index.ts';

/** `cadenza ca` as the operator types it (in this process: the command parses its own arguments). */
describe('cadenza ca', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'cadenza-ca-')), 'ca');
  afterAll(() => rmSync(join(dir, '..'), { recursive: true, force: true }));
  const run = async (...args: string[]): Promise<unknown> => {
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      out.push(String(s));
      return true;
    });
    try {
      const program = await buildProgram(commands.filter((c) => c.usage === 'ca'));
      await program.parseAsync(['node', 'cadenza', '--json', 'ca', ...args, '--dir', dir]);
    } finally {
      spy.mockRestore();
    }
    return JSON.parse(out.join(''));
  };

  it('init, issue, list, rotate what expires soon, replace the CA and retire the old one', async () => {
    await run('init', '--days', '365');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'ca.key')).mode & 0o077).toBe(0);
    await run('issue', 'db', '--server', '--host', '127.0.0.1,db.example.com');
    await run('issue', 'cadenza_sender', '--days', '10');
    const listed = (await run('list')) as Array<{ name: string; kind: string; cn: string; daysLeft: number; trusted: boolean; hosts: string }>;
    expect(listed.map((r) => [r.name, r.kind, r.cn, r.trusted])).toEqual([
      ['ca', 'ca', 'Cadenza database CA', true],
      ['cadenza_sender', 'client', 'cadenza_sender', true],
      ['db', 'server', 'db', true],
    ]);
    expect(listed.find((r) => r.name === 'db')!.hosts).toBe('127.0.0.1,db.example.com');
    expect(statSync(join(dir, 'certs', 'cadenza_sender.key')).mode & 0o077).toBe(0);

    const soon = (await run('rotate', '--within', '30')) as { plan: { reissue: Array<{ name: string }>; keep: string[] } };
    expect(soon.plan.reissue.map((r) => r.name)).toEqual(['cadenza_sender']);
    expect(soon.plan.keep).toEqual(['db']);

    const replaced = (await run('rotate', '--new-ca')) as { trusted: string[]; plan: { reissue: unknown[] } };
    expect(replaced.trusted).toHaveLength(2);
    expect(replaced.plan.reissue).toHaveLength(2);
    const during = (await run('list')) as Array<{ kind: string; trusted: boolean }>;
    expect(during.filter((r) => r.kind === 'retired-ca')).toEqual([expect.objectContaining({ trusted: true })]);
    expect((await run('retire')) as { removed: string[] }).toEqual({ removed: [expect.stringMatching(/^[0-9a-f]+$/)] });
    expect(((await run('list')) as Array<{ kind: string; trusted: boolean }>).every((r) => r.kind !== 'retired-ca' && r.trusted)).toBe(true);
  }, 30_000);

  it('refuses a server certificate without a host, and a name that is not a role name', async () => {
    await expect(run('issue', 'db2', '--server')).rejects.toThrow(/needs --host/);
    await expect(run('issue', 'bad name')).rejects.toThrow(/cannot name a certificate/);
  });
});
