import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');

describe('cadenza classify', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-classify-'));
    writeFileSync(
      join(dir, 'bounce.eml'),
      "From: MAILER-DAEMON@mx.example.org\nTo: rep@cadenza.test\nSubject: failure notice\nReturn-Path: <>\n\nHi. This is the qmail-send program at mx.example.org.\nI'm afraid I wasn't able to deliver your message to the following addresses.\n\n<dana@example.com>:\nRemote host said: 550 5.1.1 User unknown\n",
    );
    writeFileSync(join(dir, 'ooo.eml'), 'From: Dana <dana@example.com>\nTo: rep@cadenza.test\nSubject: Out of office\nAuto-Submitted: auto-replied\nDate: Mon, 1 Jun 2026 09:00:00 +0000\n\nI am out of the office. I will be back on Monday June 8, 2026.\n');
    writeFileSync(join(dir, 'reply.eml'), 'From: Dana <dana@example.com>\nTo: rep@cadenza.test\nSubject: Re: Quick question\n\nSure, call me on Thursday.\n');
    writeFileSync(join(dir, 'empty.eml'), '');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints one JSON line per file, with an error line (and exit code 1) for what it cannot read', { timeout: 60_000 }, () => {
    const files = ['bounce.eml', 'ooo.eml', 'reply.eml', 'empty.eml', 'missing.eml'];
    const r = spawnSync(process.execPath, [join(root, 'bin', 'cadenza.js'), 'classify', ...files], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((x) => x.file)).toEqual(files);
    expect(rows[0]).toMatchObject({ label: 'bounce', recipient: 'dana@example.com', status: '5.1.1', hard_soft: 'hard', bounce_class: 'user_unknown' });
    expect(rows[0]!.reason).toEqual(expect.any(String));
    expect(rows[1]).toMatchObject({ label: 'auto_reply', return_date: '2026-06-08' });
    expect(rows[2]).toMatchObject({ label: 'human_reply' });
    expect(rows[2]!.confidence).toEqual(expect.any(Number));
    expect(rows[3]!.error).toMatch(/cannot parse/);
    expect(rows[4]!.error).toMatch(/ENOENT/);
    expect(r.status).toBe(1);
  });
});
