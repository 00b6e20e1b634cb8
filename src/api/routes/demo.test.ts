import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logger.ts';
import { startApp } from '../../app/app.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';

/**
 * The first-run page's demo button, as `npm start` serves it: set up, start the demo in the
 * owner's workspace, watch it send and take replies through the API, stop it; the server's own
 * roles are suspended meanwhile and back afterwards.
 */
describe('POST /api/workspaces/:id/demo (cadenza start, every role)', () => {
  it('fills the workspace, runs, reports progress, stops; the server’s roles come back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-demo-route-'));
    const app = await startApp({ dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api', 'scheduler', 'sender', 'sync'], log: createLogger({ level: 'silent' }) });
    try {
      const server = app.server!;
      const setup = await server.inject({ method: 'POST', url: '/api/setup', payload: { setupToken: app.setupToken!.token, email: 'owner@example.test', password: 'long enough password', workspaceName: 'Acme' } });
      expect(setup.statusCode).toBe(201);
      const ws = (setup.json().workspaces as Array<{ id: string }>)[0]!.id;
      const headers = { cookie: `${SESSION_COOKIE}=${setup.cookies.find((c) => c.name === SESSION_COOKIE)!.value}`, 'x-csrf-token': setup.json().csrfToken as string };
      expect(app.scheduler).toBeDefined();

      const started = await server.inject({ method: 'POST', url: `/api/workspaces/${ws}/demo`, headers, payload: { leads: 20, speed: 14_400, durationSeconds: 300 } });
      expect(started.statusCode).toBe(202);
      expect(started.json()).toMatchObject({ running: true, sequences: [{ enrolled: 14 }, { enrolled: 6 }] });
      expect(app.scheduler).toBeUndefined(); // suspended while the demo runs
      const again = await server.inject({ method: 'POST', url: `/api/workspaces/${ws}/demo`, headers, payload: {} });
      expect(again.statusCode).toBe(409);

      let body: { sequences: Array<{ sent: number; replied: number }>; inbound: number } = { sequences: [], inbound: 0 };
      for (let i = 0; i < 200; i++) {
        await new Promise((r) => setTimeout(r, 300));
        body = (await server.inject({ method: 'GET', url: `/api/workspaces/${ws}/demo`, headers })).json();
        if (body.inbound > 0 && body.sequences.some((s) => s.replied > 0)) break;
      }
      expect(body.sequences.reduce((n, s) => n + s.sent, 0)).toBeGreaterThan(0);
      expect(body.sequences.some((s) => s.replied > 0)).toBe(true);
      // The demo's mail is in the workspace's inbox like any other.
      const inbox = await app.store.db.selectFrom('message').select('action').where('workspace_id', '=', ws).where('direction', '=', 'inbound').execute();
      expect(inbox.length).toBe(body.inbound);

      const stopped = await server.inject({ method: 'DELETE', url: `/api/workspaces/${ws}/demo`, headers });
      expect(stopped.json()).toMatchObject({ running: false });
      expect(app.scheduler).toBeDefined();
      expect(app.senders).toBeDefined();
      const live = await app.store.db.selectFrom('enrollment').select('id').where('workspace_id', '=', ws).where('state', 'in', ['active', 'paused']).execute();
      expect(live).toEqual([]);
    } finally {
      await app.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
