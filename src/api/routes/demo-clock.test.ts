import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logger.ts';
import { startApp } from '../../app/app.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';

const DAY = 86_400_000;

/**
 * While a demo runs in the server's process, the API acts in the demo's time: a person's pause is
 * journalled beside what the demo's engine writes, not days before it. Sessions stay on real time
 * (a fast demo signs nobody out), and the API is back on the system clock once the demo ends.
 */
describe('the API on the demo clock (cadenza start, every role)', () => {
  it('stamps API actions in the demo’s time while it runs, and in real time after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-demo-clock-'));
    const app = await startApp({ dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api', 'scheduler', 'sender', 'sync'], log: createLogger({ level: 'silent' }) });
    try {
      const server = app.server!;
      const setup = await server.inject({ method: 'POST', url: '/api/setup', payload: { setupToken: app.setupToken!.token, email: 'owner@example.test', password: 'long enough password', workspaceName: 'Acme' } });
      const ws = (setup.json().workspaces as Array<{ id: string }>)[0]!.id;
      const headers = { cookie: `${SESSION_COOKIE}=${setup.cookies.find((c) => c.name === SESSION_COOKIE)!.value}`, 'x-csrf-token': setup.json().csrfToken as string };
      const simulatedNow = async () => Date.parse((await server.inject({ method: 'GET', url: `/api/workspaces/${ws}/demo`, headers })).json().simulatedNow as string);

      // 100,000 times faster: a 14-day session would end after 12 real seconds on the demo's clock.
      const started = await server.inject({ method: 'POST', url: `/api/workspaces/${ws}/demo`, headers, payload: { leads: 10, speed: 100_000, durationSeconds: 120 } });
      expect(started.statusCode).toBe(202);
      const waitAhead = async (ms: number) => {
        const end = Date.now() + 60_000;
        while ((await simulatedNow()) - Date.now() < ms) {
          expect(Date.now()).toBeLessThan(end);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      await waitAhead(3_600_000);

      // A live enrollment, paused by a person: the transition is journalled in the demo's time.
      const live = await app.store.db.selectFrom('enrollment').select('id').where('workspace_id', '=', ws).where('state', '=', 'active').executeTakeFirstOrThrow();
      const before = await simulatedNow();
      const paused = await server.inject({ method: 'POST', url: `/api/workspaces/${ws}/enrollments/${live.id}/pause`, headers, payload: { reason: 'talking on the phone' } });
      expect(paused.statusCode, paused.body).toBe(200);
      const after = await simulatedNow();
      const journal = await app.store.db.selectFrom('event').select('at').where('enrollment_id', '=', live.id).where('type', '=', 'pause').executeTakeFirstOrThrow();
      expect(journal.at.getTime()).toBeGreaterThanOrEqual(before);
      expect(journal.at.getTime()).toBeLessThanOrEqual(after);
      expect(journal.at.getTime() - Date.now()).toBeGreaterThan(3_600_000);

      // Past the 14-day session lifetime on the demo's clock: still signed in, and a lead changed
      // through the API has the demo's time as its updated_at.
      await waitAhead(15 * DAY);
      const lead = await app.store.db.selectFrom('lead').select('id').where('workspace_id', '=', ws).executeTakeFirstOrThrow();
      const patched = await server.inject({ method: 'PATCH', url: `/api/workspaces/${ws}/leads/${lead.id}`, headers, payload: { title: 'VP Sales' } });
      expect(patched.statusCode, patched.body).toBe(200);
      const during = await app.store.db.selectFrom('lead').select('updated_at').where('id', '=', lead.id).executeTakeFirstOrThrow();
      expect(during.updated_at.getTime() - Date.now()).toBeGreaterThan(14 * DAY);

      const stopped = await server.inject({ method: 'DELETE', url: `/api/workspaces/${ws}/demo`, headers });
      expect(stopped.statusCode).toBe(200);
      expect(app.worldClock.switched).toBe(false);
      const again = await server.inject({ method: 'PATCH', url: `/api/workspaces/${ws}/leads/${lead.id}`, headers, payload: { title: 'CRO' } });
      expect(again.statusCode, again.body).toBe(200);
      const afterDemo = await app.store.db.selectFrom('lead').select('updated_at').where('id', '=', lead.id).executeTakeFirstOrThrow();
      expect(Math.abs(afterDemo.updated_at.getTime() - Date.now())).toBeLessThan(60_000);
    } finally {
      await app.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
