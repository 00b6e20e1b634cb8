import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { embeddedDbDir } from '../common/config.ts';
import { isCadenzaError } from '../common/errors.ts';
import { createLogger } from '../common/logger.ts';
import { writeCapture } from '../dialer/recording/capture-fixture.ts';
import { openStore } from '../store/store.ts';
import { seedWorkspace } from '../../test/api.ts';
import { startApp } from './app.ts';

const FIXTURE = join(import.meta.dirname, '../../test/fixtures/asr');
const log = createLogger({ level: 'silent' });

/**
 * `cadenza start` with call transcription configured: the API role loads the model at its start
 * (a bad one refuses the start), its recording ingester writes each stored recording's job, and its
 * worker transcribes it, all in the process, with nothing but the configuration wired by hand.
 */
describe('cadenza start transcribes recorded calls', () => {
  it('refuses to start on a model that cannot be loaded, naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-tr-bad-'));
    try {
      const model = join(dir, 'model');
      mkdirSync(model);
      for (const f of ['decoder.onnx', 'joiner.onnx', 'tokens.txt']) copyFileSync(join(FIXTURE, f), join(model, f));
      const e = await startApp({ dataDir: join(dir, 'data'), port: 0, host: '127.0.0.1', roles: ['api'], log, transcription: { dir: model } }).catch((x: unknown) => x);
      expect(isCadenzaError(e) && e.code).toBe('TRANSCRIPTION_MODEL_INVALID');
      expect((e as Error).message).toMatch(/encoder/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("a capture in the spool becomes the call's recording and then its transcript", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-tr-app-'));
    const dataDir = join(dir, 'data');
    try {
      // The fixture with the joiner that emits a word every 40 ms: words whatever the audio (two tones here).
      const model = join(dir, 'model');
      mkdirSync(model);
      for (const f of ['encoder.onnx', 'decoder.onnx', 'tokens.txt']) copyFileSync(join(FIXTURE, f), join(model, f));
      copyFileSync(join(FIXTURE, 'always-emits', 'joiner.onnx'), join(model, 'joiner.onnx'));
      // A first start makes the store and its workspace; the call is then recorded while it is down.
      await (await startApp({ dataDir, port: 0, host: '127.0.0.1', roles: ['api'], log })).stop();
      const store = await openStore({ dataDir: embeddedDbDir(dataDir) });
      const callId = '00000000-0000-4000-8000-00000000a001';
      const sipCallId = 'tr-app-1@browser.invalid';
      try {
        const w = await seedWorkspace(store, 'Recorded Co', 'rep@recorded.test');
        const rep = w.userId;
        await store.db.updateTable('workspace').set({ settings: JSON.stringify({ callRecording: true }) }).where('id', '=', w.workspaceId).execute();
        await store.db.insertInto('phone_call').values({ id: callId, workspace_id: w.workspaceId, placed_by: rep, direction: 'outbound', source: 'dialer', state: 'ended', sip_call_id: sipCallId }).execute();
        writeCapture(join(dir, 'spool'), sipCallId, rep, 1);
      } finally {
        await store.close();
      }
      const app = await startApp({ dataDir, port: 0, host: '127.0.0.1', roles: ['api'], log, recording: { spoolDir: join(dir, 'spool') }, transcription: { dir: model, name: 'app-test' } });
      try {
        let t: { state: string; model: string | null; word_count: number | null } | undefined;
        for (let i = 0; i < 200 && t?.state !== 'done'; i++) {
          t = await app.store.db.selectFrom('call_transcript').select(['state', 'model', 'word_count']).where('call_id', '=', callId).executeTakeFirst();
          if (t?.state !== 'done') await new Promise((r) => setTimeout(r, 50));
        }
        expect(t).toMatchObject({ state: 'done', model: expect.stringMatching(/^app-test@/) });
        // 3 s of call, a word each 40 ms on each of the two legs (give or take the edges).
        expect(t!.word_count).toBeGreaterThan(100);
        const metrics = await (await fetch(`${app.url}/metrics`)).text();
        expect(metrics).toMatch(/cadenza_call_transcriptions_total\{result="done"\} 1/);
      } finally {
        await app.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
