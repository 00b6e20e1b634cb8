import type { Command } from 'commander';
import { loadConfig, parseRoles, type Role } from '../../common/config.ts';
import { anyDatabaseUrl, roleDatabaseUrl, roleUrlEnv } from '../../ops/role-database-url.ts';
import { startApp } from '../../app/app.ts';
import { domainCheckConfigFrom } from '../../sending/dns/health-settings.ts';
import { oauthSettingsFrom } from '../../mailbox/oauth/client.ts';
import { crmOAuthAppsFrom } from '../../crm/oauth/apps.ts';
import { pushSettingsFrom } from '../../mailbox/sync/push-settings.ts';
import { systemMailerSettingsFrom } from '../../api/system-mailer.ts';
import { createLogger } from '../../common/logger.ts';
import { globals } from '../context.ts';
import { trackingDomainSettingsFrom } from '../../tracking/domains/settings.ts';
import { dialerSettingsFrom, transcriptionSettingsFrom } from '../../dialer/settings.ts';
import { systemClock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import { Supervisor } from '../../ops/supervisor.ts';
import { spawnRoleProcess } from '../../ops/role-process.ts';
import { systemdNotifier } from '../../ops/sd-notify.ts';

/**
 * What the first start prints: until the first account exists, setup asks for this token, so
 * that only someone at this console (or with the data folder) can claim the install.
 */
export function setupBanner(url: string, s: { token: string; file: string }): string {
  return [
    '',
    'First run: open Cadenza in a browser and give this setup token to create the owner account:',
    '',
    `    ${s.token}`,
    '',
    `(${url ? `at ${url}; ` : ''}also in ${s.file}, readable by you only; it stops working once setup is done)`,
    '',
    '',
  ].join('\n');
}

export function register(program: Command): void {
  program
    .command('start')
    .option('--port <n>', 'port to listen on (env PORT, default 8080)')
    .option('--host <addr>', 'address to listen on (env HOST, default 127.0.0.1, this machine only; 0.0.0.0 for every interface)')
    .option('--roles <list>', 'comma-separated roles to run: api, scheduler, sender, sync (env CADENZA_ROLES)')
    .option('--supervise', 'run the roles in child processes (one per role on PostgreSQL, one on the embedded store) and restart one that crashes, with back-off')
    .action(async (opts: { port?: string; host?: string; roles?: string; supervise?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      const cfg = loadConfig();
      const roles = parseRoles(opts.roles ?? cfg.CADENZA_ROLES);
      if (opts.supervise) {
        const postgres = Boolean(g.databaseUrl) || anyDatabaseUrl(cfg);
        const port = opts.port ?? String(cfg.PORT);
        const host = opts.host ?? cfg.HOST;
        // The embedded store serves one process: there the one child runs every role.
        const groups = postgres ? roles.map((r) => [r]) : [roles];
        // Each child its own URL: its database user and its certificate (ops/role-database-url.ts),
        // resolved before any child starts, so a missing one is refused here and not at a restart.
        const urls = new Map(groups.map((rs) => [rs.join(','), postgres ? roleDatabaseUrl(rs, cfg, g.databaseUrl) : undefined]));
        await supervise({
          groups,
          env: (rs) => {
            const url = urls.get(rs.join(','));
            return { ...(url ? roleUrlEnv(rs, url) : {}), CADENZA_DATA_DIR: g.dataDir ?? cfg.CADENZA_DATA_DIR };
          },
          args: (rs) => (rs.includes('api') ? ['--port', port, '--host', host] : []),
        });
        return;
      }
      const push = pushSettingsFrom(cfg);
      const mailer = systemMailerSettingsFrom(cfg);
      const domains = domainCheckConfigFrom(cfg);
      const log = createLogger();
      const databaseUrl = roleDatabaseUrl(roles, cfg, g.databaseUrl);
      // Only a URL with a client certificate loads the X.509 reader: a plain start pays nothing for it.
      if (databaseUrl?.includes('sslcert=')) {
        const expiring = (await import('../../ops/mtls/cert-expiry.ts')).clientCertExpiry(databaseUrl, systemClock.now());
        if (expiring) log.warn({ roles }, expiring);
      }
      const trackingDomains = trackingDomainSettingsFrom(cfg);
      const dialer = dialerSettingsFrom(cfg);
      const transcription = transcriptionSettingsFrom(cfg);
      const app = await startApp({
        ...(dialer ? { dialer } : {}),
        ...(cfg.CADENZA_RECORDING_SPOOL ? { recording: { spoolDir: cfg.CADENZA_RECORDING_SPOOL, ...(cfg.CADENZA_RECORDING_ANNOUNCEMENT ? { announcementFile: cfg.CADENZA_RECORDING_ANNOUNCEMENT } : {}) } } : {}),
        ...(trackingDomains ? { trackingDomains } : {}),
        ...(transcription ? { transcription } : {}),
        log,
        databaseUrl,
        dataDir: g.dataDir ?? cfg.CADENZA_DATA_DIR,
        port: opts.port !== undefined ? Number(opts.port) : cfg.PORT,
        host: opts.host ?? cfg.HOST,
        roles,
        ...(cfg.CADENZA_PUBLIC_URL ? { publicUrl: cfg.CADENZA_PUBLIC_URL } : {}),
        ...(cfg.CADENZA_RSPAMD_URL ? { rspamdUrl: cfg.CADENZA_RSPAMD_URL } : {}),
        oauth: oauthSettingsFrom(cfg),
        crmOAuth: crmOAuthAppsFrom(cfg),
        ...(push ? { push } : {}),
        ...(mailer ? { mailer } : {}),
        ...(domains ? { domains } : {}),
        webhooks: { allowPrivate: cfg.CADENZA_WEBHOOK_ALLOW_PRIVATE },
        ...(cfg.CADENZA_METRICS_TOKEN ? { metricsToken: cfg.CADENZA_METRICS_TOKEN } : {}),
        federation: { ...(cfg.CADENZA_FEDERATION_NAME ? { name: cfg.CADENZA_FEDERATION_NAME } : {}), ...(cfg.CADENZA_FEDERATION_EVERY_MS ? { everyMs: cfg.CADENZA_FEDERATION_EVERY_MS } : {}) },
        ...(cfg.CADENZA_CLICK_JOURNAL_DIR ? { clickJournalDir: cfg.CADENZA_CLICK_JOURNAL_DIR } : {}),
        trustProxy: cfg.CADENZA_TRUST_PROXY,
        preparedStatements: cfg.CADENZA_PG_PREPARED_STATEMENTS,
        ...(cfg.CADENZA_LIST_HYGIENE === 'on' ? { hygiene: cfg.CADENZA_DNS_RESOLVER ? { dnsServer: cfg.CADENZA_DNS_RESOLVER } : {} } : {}),
        sending: {
          ...(cfg.CADENZA_UNKNOWN_GRACE_MS !== undefined ? { unknownGraceMs: cfg.CADENZA_UNKNOWN_GRACE_MS } : {}),
          ...(cfg.CADENZA_SENDER_RESOLVE_EVERY_MS !== undefined ? { resolveEveryMs: cfg.CADENZA_SENDER_RESOLVE_EVERY_MS } : {}),
          ...(cfg.CADENZA_SENDER_LEASE_TTL_MS !== undefined ? { leaseTtlMs: cfg.CADENZA_SENDER_LEASE_TTL_MS } : {}),
        },
      });
      if (g.json) process.stdout.write(`${JSON.stringify({ url: app.url, backend: app.store.backend })}\n`);
      if (app.setupToken) process.stderr.write(setupBanner(app.url ?? '', app.setupToken));
      // Under systemd (Type=notify): ready now, and the watchdog fed while the event loop turns.
      const notifier = systemdNotifier(process.env, systemClock, log);
      notifier?.ready();
      await new Promise<void>((resolve) => {
        // This process is the server: bin/cadenza.js runs the command in its own process and
        // `npm start` execs it, so a signal sent to any process of the chain (npm forwards
        // SIGINT and SIGTERM to its child) reaches this handler. The handler stays until the end:
        // a terminal's Ctrl-C signals the whole process group, npm relays it again, and a second
        // signal without a handler would kill the process in the middle of its graceful stop (a
        // message half handed to the server).
        let stopping = false;
        const stop = (signal: NodeJS.Signals) => {
          if (stopping) return;
          stopping = true;
          notifier?.stopping();
          log.info({ signal }, `${signal}: draining (no new work; what is in flight finishes), then stopping`);
          void app.stop().then(
            () => {
              log.info({ signal }, 'cadenza stopped');
              resolve();
            },
            (e: unknown) => {
              log.error({ err: e }, 'cadenza stopped with an error');
              process.exitCode = 1;
              resolve();
            },
          );
        };
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
      });
    });
}

/** `cadenza start --supervise`: the children run, restarted on a crash, until a signal drains them (ops/supervisor.ts). */
async function supervise(o: { groups: Role[][]; env: (roles: Role[]) => NodeJS.ProcessEnv; args: (roles: string[]) => string[] }): Promise<void> {
  const log = createLogger({ name: 'supervisor' });
  const supervisor = new Supervisor({ groups: o.groups, spawn: (roles) => spawnRoleProcess(roles, { env: o.env(roles as Role[]), args: o.args }), clock: systemClock, log });
  // Between a crash and its restart no child may be running (the embedded store's one child), and
  // the clock's timers do not hold the process: this handle does, until the end.
  const hold = setInterval(() => undefined, 60_000);
  const stop = (signal: NodeJS.Signals) => void supervisor.stop(`${signal}`);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  supervisor.start();
  const end = await supervisor.done;
  clearInterval(hold);
  if (end.kind === 'gave-up') {
    throw cadenzaError('ROLE_KEEPS_CRASHING', `role ${end.roles} keeps crashing (${end.reason}); every role is stopped. The role's own log lines above say why.`, { roles: end.roles });
  }
}
