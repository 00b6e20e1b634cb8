import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cadenza as run } from '../../../test/cli/cadenza-process.ts';
import { embeddedDbDir } from '../../common/config.ts';
import { recordingContext } from '../../dialer/recording/ingest.ts';
import { encodeWav } from '../../dialer/transcribe/wav.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { migrate } from '../../store/migrate.ts';
import { openStore } from '../../store/store.ts';

describe('cadenza privacy export --out', () => {
  let dir: string;
  const key = randomBytes(32);
  const ws = '00000000-0000-4000-8000-0000000000b1';
  const lead = '00000000-0000-4000-8000-0000000000b2';
  const call = '00000000-0000-4000-8000-0000000000b3';
  const other = '00000000-0000-4000-8000-0000000000b4';
  // Two channels of a second of a tone: what the ingester stores, sealed as it seals it.
  const wav = encodeWav(8000, [0, 1].map((ch) => Float32Array.from({ length: 8000 }, (_, i) => 0.3 * Math.sin((2 * Math.PI * (440 + ch * 220) * i) / 8000))));
  const cadenza = (args: string[]) => run(['--data-dir', join(dir, 'data'), ...args], { cwd: dir, embedded: true, env: { CADENZA_MASTER_KEY: key.toString('base64') } });
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-privacy-cli-'));
    const store = await openStore({ dataDir: embeddedDbDir(join(dir, 'data')) });
    await migrate(store);
    const db = store.db;
    await db.insertInto('workspace').values({ id: ws, name: 'P', time_zone: 'UTC' }).execute();
    await db.insertInto('lead').values({ id: lead, workspace_id: ws, email: 'ann@prospects.test', email_norm: 'ann@prospects.test' }).execute();
    const vault = new Vault(store, localKeyWrapper(key));
    // Ann's recorded call, and a recorded call from a number no lead has (not hers: not exported).
    for (const [id, leadId] of [[call, lead], [other, null]] as const) {
      await db.insertInto('phone_call').values({ id, workspace_id: ws, lead_id: leadId, direction: 'inbound', source: 'dialer', state: 'ended', remote_e164: '+15550100' }).execute();
      const sealed = await vault.sealBytes(ws, recordingContext(id), wav);
      await db.insertInto('phone_call_recording').values({ call_id: id, workspace_id: ws, sealed, duration_ms: 1000, bytes: wav.length, announced: true }).execute();
    }
    await store.close();
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes the person's recordings as WAV files beside export.json and the CSVs, readable by the owner only", { timeout: 120_000 }, () => {
    const out = join(dir, 'ann');
    const r = cadenza(['--json', 'privacy', 'export', 'ann@prospects.test', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ out, recordings: 1, sections: { leads: 1, calls: 1, call_recordings: 1 } });
    const x = JSON.parse(readFileSync(join(out, 'export.json'), 'utf8'));
    expect(x.sections.call_recordings).toEqual([{ call_id: call, duration_ms: 1000, bytes: wav.length, announced: true, created_at: expect.any(String), audio: `/api/workspaces/${ws}/calls/${call}/recording` }]);
    const file = join(out, 'recordings', `${call}.wav`);
    expect(Buffer.compare(readFileSync(file), Buffer.from(wav))).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(() => statSync(join(out, 'recordings', `${other}.wav`))).toThrow();
    const text = cadenza(['privacy', 'export', 'ann@prospects.test', '--out', join(dir, 'ann2')]);
    expect(text.stdout).toContain('recordings/: 1 WAV file');
  });
});
