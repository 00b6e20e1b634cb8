import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { mkdtempSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, seedWorkspace, type Browser } from '../../test/api.ts';
import { createLogger } from '../common/logger.ts';
import { keyFingerprint, readMasterKey } from '../common/secrets.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { startApp, type RunningApp } from './app.ts';

const log = createLogger({ level: 'silent' });

/** A POST whose body is announced and never finished: resolves with the status, or 'none' after waitMs. */
function stalledUpload(url: URL, headers: Record<string, string>, waitMs: number): { answer: Promise<string>; socket: Promise<Socket> } {
  let gotSocket!: (s: Socket) => void;
  const socket = new Promise<Socket>((r) => (gotSocket = r));
  const answer = new Promise<string>((resolve) => {
    const r = request(url, { method: 'POST', headers: { 'content-type': 'text/csv', 'content-length': String(50 * 1024 * 1024), ...headers } }, (res) => {
      resolve(String(res.statusCode));
      res.resume();
    });
    r.on('socket', gotSocket);
    r.on('error', () => resolve('reset'));
    // More than the reader sniffs before it reads the header (encoding, delimiter), then nothing.
    r.write(`email\n${'person@acme.test\n'.repeat(12_000)}`);
    setTimeout(() => resolve('none'), waitMs).unref();
  });
  return { answer, socket };
}

/** Every path under dir with group or other permissions. */
function openToOthers(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if ((statSync(p).mode & 0o077) !== 0) out.push(`${name} ${(statSync(p).mode & 0o777).toString(8)}`);
  }
  return out;
}

describe('cadenza start at its edge', () => {
  let dir: string;
  let app: RunningApp;
  let b: Browser;
  let base: URL;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-edge-'));
    app = await startApp({ dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api'], log, drainMs: 1_500 });
    const w = await seedWorkspace(app.store, 'Edge', 'owner@edge.test');
    b = await login(app.server!, 'owner@edge.test', w.password);
    base = new URL(`/api/workspaces/${w.workspaceId}/leads/imports`, app.url);
    // A credential, so the store holds a wrapped workspace key.
    await new Vault(app.store, localKeyWrapper(readMasterKey({ dataDir: dir, env: {} })!)).seal(w.workspaceId, 'test:edge', 'x');
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers a failed upload at once though the body was never finished (a mapping naming no column)', async () => {
    const url = new URL(base);
    url.searchParams.set('mapping', JSON.stringify({ 'No Such Column': 'email' }));
    const t = Date.now();
    const r = stalledUpload(url, { cookie: b.cookie, 'x-csrf-token': b.csrf }, 4_000);
    expect(await r.answer).toBe('400');
    expect(Date.now() - t).toBeLessThan(3_000);
    // Refused before reading, too: the connection is then closed, never read to the end.
    const anon = stalledUpload(base, {}, 4_000);
    expect(await anon.answer).toBe('401');
  });

  it('keeps the data folder private: the folder 0700 while it runs, no file open to others', () => {
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'db')).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600);
  });

  it('stops within its deadline whatever requests hang: a stalled upload, half-sent headers, an idle keep-alive', async () => {
    const hung = stalledUpload(base, { cookie: b.cookie, 'x-csrf-token': b.csrf }, 30_000);
    await hung.socket;
    const slowloris = connect(Number(new URL(app.url!).port), '127.0.0.1');
    slowloris.on('error', () => undefined);
    slowloris.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const idle = connect(Number(new URL(app.url!).port), '127.0.0.1');
    idle.on('error', () => undefined);
    idle.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 300));
    const t = Date.now();
    await app.stop();
    expect(Date.now() - t).toBeLessThan(1_500 + 2_500);
    expect(await hung.answer).not.toBe('none');
    slowloris.destroy();
    idle.destroy();
    expect(openToOthers(dir)).toEqual([]);
  }, 30_000);

  it('refuses to start on the store once its master key is gone or wrong, saying what to do', async () => {
    const key = readMasterKey({ dataDir: dir, env: {} })!;
    unlinkSync(join(dir, 'master.key'));
    await expect(startApp({ dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api'], log })).rejects.toThrow(new RegExp(`no master key found.*${keyFingerprint(key)}.*keys verify`));
    expect(() => readMasterKey({ dataDir: dir, env: {} })).not.toThrow();
    expect(readMasterKey({ dataDir: dir, env: {} })).toBeUndefined();
  }, 60_000);
});
