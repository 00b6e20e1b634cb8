import { describe, expect, it } from 'vitest';
import { backupArgs, pgbackrestCommand, restoreArgs, summariseInfo } from './pgbackrest.ts';

const t = { stanza: 'cadenza', config: '/etc/pgbackrest/cadenza.conf' };

describe('pgBackRest command lines', () => {
  it('a backup of the stanza, of the type asked', () => {
    expect(backupArgs(t, 'incr')).toEqual(['--stanza=cadenza', '--config=/etc/pgbackrest/cadenza.conf', '--log-level-console=warn', 'backup', '--type=incr']);
  });

  it('a restore to an instant: delta, time target in UTC, promote at the target', () => {
    expect(restoreArgs({ stanza: 's' }, Date.parse('2026-12-03T07:41:00Z'))).toEqual([
      '--stanza=s', '--log-level-console=warn', 'restore', '--delta', '--type=time', '--target=2026-12-03 07:41:00.000+00', '--target-action=promote',
    ]);
  });

  it('as root with --as-user, through runuser; otherwise as is', () => {
    expect(pgbackrestCommand(['info'], 'postgres', 0)).toEqual(['runuser', ['-u', 'postgres', '--', 'pgbackrest', 'info']]);
    expect(pgbackrestCommand(['info'], 'postgres', 1000)).toEqual(['pgbackrest', ['info']]);
  });
});

describe('summariseInfo', () => {
  const info = [{
    name: 'cadenza',
    status: { code: 0, message: 'ok' },
    archive: [{ id: '15-1', min: '000000010000000000000001', max: '000000010000000000000004' }],
    backup: [
      { label: '20261203-065630F', type: 'full', timestamp: { start: 1796280990, stop: 1796280995 }, info: { size: 23_000_000, repository: { size: 4_500_000, delta: 4_500_000 } } },
      { label: '20261203-065630F_20261203-070000I', type: 'incr', timestamp: { start: 1796282400, stop: 1796282402 }, info: { size: 23_100_000, repository: { size: 4_600_000, delta: 120_000 } } },
    ],
  }];

  it('each backup, the archive and the earliest restorable instant (the end of the oldest backup)', () => {
    const s = summariseInfo(info, 'cadenza');
    expect(s.status).toBe('ok');
    expect(s.backups.map((b) => [b.type, b.repositoryBytes])).toEqual([['full', 4_500_000], ['incr', 120_000]]);
    expect(s.restorableFrom).toBe(new Date(1796280995 * 1000).toISOString());
    expect(s.archive).toEqual({ min: '000000010000000000000001', max: '000000010000000000000004' });
  });

  it('a stanza pgBackRest does not have is named in the error', () => {
    expect(() => summariseInfo(info, 'other')).toThrow(/no stanza 'other'/);
  });
});
