import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../common/logger.ts';
import { startApp } from './app.ts';

describe('cadenza start', () => {
  it('serves /healthz and /readyz on the embedded store, then stops cleanly, and starts again on the same folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-app-'));
    try {
      const log = createLogger({ level: 'silent' });
      const app = await startApp({ dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api', 'scheduler', 'sender'], log });
      const health = await fetch(`${app.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });
      const ready = await fetch(`${app.url}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', backend: 'pglite' });
      await app.stop();
      // The folder is a durable store: a second start finds its workspace and migrations.
      const again = await startApp({ dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api'], log });
      const ws = await again.store.db.selectFrom('workspace').select('name').execute();
      expect(ws).toEqual([{ name: 'Default' }]);
      await again.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
