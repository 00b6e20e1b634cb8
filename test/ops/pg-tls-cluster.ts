import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { initCa, issueCert, caFiles } from '../../src/ops/mtls/ca-folder.ts';

/**
 * A PostgreSQL cluster of a test's own, on its own port, that admits nobody but by client
 * certificate (docs/security.md "Database connections"):
 *
 *   ssl = on, ssl_cert_file/ssl_key_file: a server certificate for 127.0.0.1 from a fresh CA
 *   ssl_ca_file = that CA's trust.pem
 *   pg_hba.conf:  hostssl all all 127.0.0.1/32 cert   (the CN must be the role: verify-full)
 *                 host    all all 127.0.0.1/32 reject (no TLS, no entry)
 *
 * The superuser `postgres` gets a client certificate too, so the test migrates and grants over the
 * same door. PostgreSQL refuses to run as root: as root, the server runs as the `postgres` account.
 */
export interface TlsCluster {
  port: number;
  /** The CA folder (`cadenza ca` layout): certs/<role>.crt and .key, trust.pem. */
  caDir: string;
  /** verify-full URL for `user` with certs/<cert>.crt (default: the user's own). */
  url(user: string, database: string, cert?: { crt: string; key: string } | null): string;
  /** Issues a client certificate certs/<name>.crt for the CN `name`. */
  issueClient(name: string): Promise<void>;
  admin<T>(database: string, fn: (c: pg.Client) => Promise<T>): Promise<T>;
  /** Copies the CA folder's trust.pem and server certificate to the server again and reloads it (after `ca rotate`, `ca retire`). */
  reloadTls(): void;
  stop(): void;
}

const BIN = (() => {
  const r = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '/usr/lib/postgresql/15/bin';
})();

/** Why the cluster cannot be made here (missing tools), or undefined. */
export function tlsClusterSkipReason(): string | undefined {
  for (const tool of ['initdb', 'pg_ctl']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool} || test -x ${BIN}/${tool}`], { encoding: 'utf8' }).status === 0;
    if (!found) return `${tool} is not installed (Debian package postgresql)`;
  }
  return undefined;
}

const asRoot = process.getuid?.() === 0;
function runPg(cmd: string, args: string[]): void {
  const bin = join(BIN, cmd);
  if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'pipe' });
  else execFileSync(bin, args, { stdio: 'pipe' });
}

export async function startTlsCluster(port: number): Promise<TlsCluster> {
  // A cluster a crashed run left on this port is stopped first: its folder is noted beside the temp folder.
  const note = join(tmpdir(), `cadenza-pg-tls-${port}.dir`);
  if (existsSync(note)) stopCluster(readFileSync(note, 'utf8').trim());
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-pg-tls-'));
  writeFileSync(note, dir);
  const data = join(dir, 'data');
  const caDir = join(dir, 'ca');
  const now = Date.now();
  await initCa(caDir, { name: 'Cadenza test CA', days: 30, nowMs: now });
  await issueCert(caDir, { name: 'server', kind: 'server', hosts: ['127.0.0.1', 'localhost'], days: 30, nowMs: now });
  await issueCert(caDir, { name: 'postgres', kind: 'client', days: 30, nowMs: now });
  if (asRoot) {
    chmodSync(dir, 0o755);
    const pgUser = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
    chownSync(dir, Number(pgUser), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()));
  }
  runPg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  const f = caFiles(caDir);
  // The server's own copies, owned by the account that runs it (PostgreSQL checks the key's owner and mode).
  const installTls = () => {
    for (const [from, to] of [[join(f.certs, 'server.crt'), 'server.crt'], [join(f.certs, 'server.key'), 'server.key'], [f.trust, 'root.crt']] as const) {
      copyFileSync(from, join(data, to));
      chmodSync(join(data, to), 0o600);
      if (asRoot) execFileSync('chown', ['postgres:postgres', join(data, to)]);
    }
  };
  installTls();
  appendFileSync(
    join(data, 'postgresql.conf'),
    ['ssl = on', "ssl_cert_file = 'server.crt'", "ssl_key_file = 'server.key'", "ssl_ca_file = 'root.crt'", "listen_addresses = '127.0.0.1'", 'fsync = off', 'max_connections = 100', ''].join('\n'),
  );
  writeFileSync(join(data, 'pg_hba.conf'), ['hostssl all all 127.0.0.1/32 cert', 'host all all 127.0.0.1/32 reject', ''].join('\n'));
  if (asRoot) execFileSync('chown', ['postgres:postgres', join(data, 'pg_hba.conf')]);
  runPg('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${dir}`, 'start']);
  const cluster: TlsCluster = {
    port,
    caDir,
    url(user, database, cert) {
      const q = new URLSearchParams({ sslmode: 'verify-full', sslrootcert: f.trust });
      const c = cert === undefined ? { crt: join(f.certs, `${user}.crt`), key: join(f.certs, `${user}.key`) } : cert;
      if (c) {
        q.set('sslcert', c.crt);
        q.set('sslkey', c.key);
      }
      return `postgres://${user}@127.0.0.1:${port}/${database}?${q.toString()}`;
    },
    async issueClient(name) {
      await issueCert(caDir, { name, kind: 'client', days: 30, nowMs: Date.now() });
    },
    async admin(database, fn) {
      const c = new pg.Client({ connectionString: cluster.url('postgres', database) });
      await c.connect();
      try {
        return await fn(c);
      } finally {
        await c.end();
      }
    },
    reloadTls() {
      installTls();
      // A reload re-reads the SSL files for new connections (PostgreSQL 10+); open ones keep theirs.
      runPg('pg_ctl', ['-D', data, 'reload']);
    },
    stop() {
      stopCluster(dir);
      rmSync(note, { force: true });
    },
  };
  return cluster;
}

function stopCluster(dir: string): void {
  if (existsSync(join(dir, 'data', 'postmaster.pid'))) {
    try {
      runPg('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already stopped
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
