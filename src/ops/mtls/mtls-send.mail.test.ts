import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../store/migrate.ts';
import { openStore } from '../../store/store.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { resetMailBed } from '../../../test/mail/mailbed.ts';
import { launchFirstSend } from '../../../test/launch-first-send.ts';
import { cli, root, spawnLogged, userEnv } from '../../../test/cli/server-process.ts';
import { startTlsCluster, tlsClusterSkipReason, type TlsCluster } from '../../../test/ops/pg-tls-cluster.ts';
import { applyGrants } from './apply-grants.ts';
import { DB_ROLES } from './db-grants.ts';

/**
 * The legitimate path end to end under mutual TLS and least privilege (cluster on port 5571 that
 * admits nobody but by client certificate): the four roles, each on its own database user and
 * certificate, send an email through the mail bed and stop the enrollment on the reply; and
 * `cadenza start --supervise` gives each role child its own URL (CADENZA_DATABASE_URL_<ROLE>).
 */
const PORT = 5571;
const REP = 'sync58@inbox.test';
const PROSPECT = 'sync59@inbox.test';
const skip = tlsClusterSkipReason();

describeMailBed('mutual TLS between the role processes and PostgreSQL', () => {
  describe.skipIf(skip !== undefined)(`on a cluster that admits only client certificates${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let cluster: TlsCluster;
    let n = 0;
    /**
     * A fresh database, migrated by the owner and granted (in this process, or with the commands
     * the operator runs: `cadenza migrate` and `cadenza db grants` over the superuser's certificate); each role's URL.
     */
    const database = async (o: { viaCli?: boolean } = {}) => {
      const name = `cadenza_${++n}`;
      await cluster.admin('postgres', (c) => c.query(`create database ${name}`));
      if (o.viaCli) {
        for (const args of [['migrate'], ['db', 'grants']]) {
          const r = spawnSync(process.execPath, [cli, '--database-url', cluster.url('postgres', name), ...args], { cwd: root, env: userEnv, encoding: 'utf8', timeout: 120_000 });
          expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
          process.stdout.write(r.stdout);
        }
      } else {
        const owner = await openStore({ databaseUrl: cluster.url('postgres', name), poolSize: 2 });
        await migrate(owner);
        await owner.close();
        await cluster.admin(name, (c) => applyGrants(c));
      }
      return { name, urls: { api: cluster.url(DB_ROLES.api, name), scheduler: cluster.url(DB_ROLES.scheduler, name), sender: cluster.url(DB_ROLES.sender, name), sync: cluster.url(DB_ROLES.sync, name) } };
    };

    beforeAll(async () => {
      await resetMailBed([REP, PROSPECT]);
      cluster = await startTlsCluster(PORT);
      for (const r of Object.values(DB_ROLES)) await cluster.issueClient(r);
    }, 120_000);
    afterAll(() => cluster?.stop());

    it('each role on its own certificate: the email reaches the prospect and their reply stops the enrollment', async () => {
      const { urls } = await database();
      // Every warning and error the four roles log, to find a write refused on the way.
      const lines: string[] = [];
      const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
      const f = await launchFirstSend({ roleUrls: urls, rep: REP, prospect: PROSPECT, password: 'pass', reply: true, log });
      process.stdout.write(`mtls launch: ${JSON.stringify(f)}\n`);
      expect(lines.filter((l) => /permission denied|42501/.test(l))).toEqual([]);
      expect(f.deliveredMs, JSON.stringify(f)).toBeLessThan(30_000);
      expect(f.replyIngestedMs, JSON.stringify(f)).toBeLessThan(30_000);
    }, 240_000);

    it('cadenza start --supervise: every role child logs in as its own role with its own certificate', async () => {
      const { name, urls } = await database({ viaCli: true });
      const dir = mkdtempSync(join(tmpdir(), 'cadenza-mtls-supervise-'));
      const env = {
        ...userEnv,
        CADENZA_MASTER_KEY: randomBytes(32).toString('base64'),
        CADENZA_DATABASE_URL_API: urls.api,
        CADENZA_DATABASE_URL_SCHEDULER: urls.scheduler,
        CADENZA_DATABASE_URL_SENDER: urls.sender,
        CADENZA_DATABASE_URL_SYNC: urls.sync,
      };
      const p = spawnLogged(process.execPath, [cli, '--data-dir', dir, 'start', '--supervise', '--port', '0', '--host', '127.0.0.1'], { cwd: root, env });
      try {
        const seen = async () =>
          cluster.admin(name, async (c) =>
            (await c.query<{ who: string; dn: string }>(`select distinct a.usename as who, s.client_dn as dn from pg_stat_activity a join pg_stat_ssl s using (pid) where a.datname = $1 and a.usename <> 'postgres' order by 1`, [name])).rows,
          );
        const want = Object.values(DB_ROLES).sort().map((r) => ({ who: r, dn: `/CN=${r}` }));
        const end = Date.now() + 180_000;
        let rows = await seen();
        while (JSON.stringify(rows) !== JSON.stringify(want)) {
          if (Date.now() > end || p.child.exitCode !== null) throw new Error(`roles connected: ${JSON.stringify(rows)}\n${p.log()}`);
          await new Promise((r) => setTimeout(r, 500));
          rows = await seen();
        }
        expect(rows).toEqual(want);
        expect(p.log()).not.toMatch(/permission denied/);
      } finally {
        const exited = new Promise((r) => p.child.once('exit', r));
        if (p.child.exitCode === null) p.child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
        if (p.child.exitCode === null) p.child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    }, 240_000);
  });
});
