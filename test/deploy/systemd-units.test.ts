import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROLES } from '../../src/common/config.ts';

const unitsDir = join(import.meta.dirname, '..', '..', 'deploy', 'systemd');
const analyze = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();

/**
 * deploy/systemd/ checked by systemd itself: `systemd-analyze verify` loads each role's instance of
 * the template and the target. It exits 0 on a misspelt value (it logs "Failed to parse …,
 * ignoring" and goes on), so any output at all fails the test.
 */
describe.skipIf(!analyze)(`systemd units${analyze ? '' : ' (skipped: systemd-analyze is not installed)'}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-units-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of readdirSync(unitsDir)) copyFileSync(join(unitsDir, f), join(dir, f));
  const verify = (unit: string) => {
    const r = spawnSync(analyze, ['verify', '--man=no', join(dir, unit)], { encoding: 'utf8', env: { ...process.env, SYSTEMD_LOG_LEVEL: 'notice' } });
    return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
  };

  it.each(ROLES.map((r) => `cadenza@${r}.service`))('%s verifies with nothing to say', (unit) => {
    expect(verify(unit)).toEqual({ status: 0, output: '' });
  });

  it('cadenza.target verifies and wants every role', () => {
    expect(verify('cadenza.target')).toEqual({ status: 0, output: '' });
    const wants = /^Wants=(.*)$/m.exec(readFileSync(join(dir, 'cadenza.target'), 'utf8'))![1]!.split(/\s+/);
    expect(wants.sort()).toEqual(ROLES.map((r) => `cadenza@${r}.service`).sort());
  });

  it('the check is not blind: a misspelt value is caught', () => {
    const broken = join(dir, 'broken@.service');
    const text = readFileSync(join(dir, 'cadenza@.service'), 'utf8').replace('Restart=on-failure', 'Restart=sometimes');
    writeFileSync(broken, text);
    expect(verify('broken@sender.service').output).toMatch(/Failed to parse service restart specifier/);
  });

  it('the template restarts on failure, is watched, limited and confined', () => {
    const unit = readFileSync(join(dir, 'cadenza@.service'), 'utf8');
    for (const line of ['Type=notify', 'NotifyAccess=all', 'Restart=on-failure', 'NoNewPrivileges=yes', 'ProtectSystem=strict', 'PrivateTmp=yes', 'ReadWritePaths=/var/lib/cadenza']) {
      expect(unit).toMatch(new RegExp(`^${line}$`, 'm'));
    }
    for (const key of ['WatchdogSec', 'MemoryMax', 'CPUQuota', 'LimitNOFILE']) expect(unit).toMatch(new RegExp(`^${key}=\\S+$`, 'm'));
    expect(unit).toMatch(/^ExecStart=.* start --roles %i$/m);
  });
});
