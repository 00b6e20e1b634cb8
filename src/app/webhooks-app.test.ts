import Fastify from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { createLogger } from '../common/logger.ts';
import { openMasterKey } from '../mailbox/master-key.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { seededRandom } from '../common/random.ts';
import { createEndpoint } from '../api/webhooks/endpoints.ts';
import { signatureHeader, verify } from '../api/webhooks/signature.ts';
import { startApp } from './app.ts';

describe('cadenza start delivers webhooks', () => {
  it('the api role runs the dispatcher: a journal fact reaches a loopback receiver when private destinations are allowed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-wh-app-'));
    const rx = Fastify();
    const got: Array<{ body: string; signature: string }> = [];
    rx.addContentTypeParser('application/json', { parseAs: 'string' }, (_r, b, done) => done(null, b));
    rx.post('/in', async (req) => {
      got.push({ body: req.body as string, signature: req.headers[signatureHeader] as string });
      return 'ok';
    });
    await rx.listen({ host: '127.0.0.1', port: 0 });
    const app = await startApp({ dataDir: dir, port: 0, host: '127.0.0.1', roles: ['api'], log: createLogger({ level: 'silent' }), webhooks: { allowPrivate: true, pollMs: 50 } });
    try {
      const ws = (await app.store.db.selectFrom('workspace').select('id').executeTakeFirstOrThrow()).id;
      const ep = await createEndpoint({ db: app.store.db, clock: systemClock, random: seededRandom('wh-app'), sealer: new Vault(app.store, localKeyWrapper(await openMasterKey(app.store, { dataDir: dir }))) }, { allowPrivate: true }, { workspaceId: ws, url: `http://127.0.0.1:${(rx.server.address() as { port: number }).port}/in`, events: ['reply'] });
      await sql`insert into event (workspace_id, enrollment_id, type, payload, at) values (${ws}, null, 'reply', '{"event":{"type":"reply"},"to":"replied"}', now())`.execute(app.store.db);
      for (let i = 0; i < 200 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(got).toHaveLength(1);
      expect(JSON.parse(got[0]!.body)).toMatchObject({ type: 'reply', workspaceId: ws, data: { applied: true, state: 'replied' } });
      expect(verify(got[0]!.signature, got[0]!.body, ep.secret, Date.now()).ok).toBe(true);
    } finally {
      await app.stop();
      await rx.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
