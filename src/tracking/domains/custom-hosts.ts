import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import { Leases } from '../../ops/leases.ts';
import type { Db, Store } from '../../store/store.ts';
import type { AccountKeyWrapper } from './account-keys.ts';
import { AcmeIssuer, type AcmeSettings } from './acme-issuer.ts';
import { CertificateBook } from './certificate-book.ts';
import type { SecretSealer } from './certificates.ts';
import { challengeRoute } from './challenge-route.ts';
import { dnsResolver, type CnameResolver } from './cname-check.ts';
import { DomainJob } from './domain-job.ts';
import { customHostGuard } from './host-guard.ts';
import { listenTrackingHttps, type TrackingListener } from './https-listener.ts';

/**
 * Custom tracking hosts in one process, put together: the certificates served (CertificateBook),
 * the job that verifies, issues and renews (DomainJob, under its lease), the HTTPS listener with
 * SNI, and, on the app's Fastify instance, the ACME challenge route and the host guard.
 *
 *   const hosts = new CustomHosts(settings, deps);
 *   hosts.register(app);            // before the app listens
 *   await hosts.start(app);          // after: the HTTPS port, the book, the job
 */
export interface CustomHostSettings {
  /** The HTTPS port of custom hosts (443 in production; 0: any free port, for tests). */
  httpsPort: number;
  httpsHost: string;
  /** The name every custom host must be a CNAME to. */
  publicHost: string;
  acme: AcmeSettings;
  /** DNS servers for the CNAME check ('127.0.0.1:53'); absent: the system's. */
  dnsServers?: readonly string[];
  /** How often the job looks for due hosts, and the book for new certificates (defaults 60 s, 10 s). */
  jobEveryMs?: number;
  bookEveryMs?: number;
}

export interface CustomHostDeps {
  store: Store;
  clock: Clock;
  vault: SecretSealer;
  /** Wraps the ACME account key (the master key's KeyWrapper). */
  wrapper: AccountKeyWrapper;
  /** This process's lease owner id. */
  owner: string;
  resolver?: CnameResolver;
  log?: Logger;
}

export class CustomHosts {
  readonly book: CertificateBook;
  readonly job: DomainJob;
  private listener: TrackingListener | undefined;
  private readonly db: Db;
  private readonly clock: Clock;

  constructor(
    readonly settings: CustomHostSettings,
    deps: CustomHostDeps,
  ) {
    const { store, clock, vault, log } = deps;
    this.book = new CertificateBook({ db: store.db, vault, clock, ...(log ? { log } : {}), ...(settings.bookEveryMs ? { everyMs: settings.bookEveryMs } : {}) });
    this.job = new DomainJob({
      db: store.db,
      leases: new Leases(store, clock),
      owner: deps.owner,
      clock,
      resolver: deps.resolver ?? dnsResolver(settings.dnsServers),
      publicHost: settings.publicHost,
      issuer: new AcmeIssuer({ db: store.db, wrapper: deps.wrapper, settings: settings.acme, clock }),
      vault,
      onIssued: () => void this.book.refresh().catch((e: unknown) => log?.warn({ err: e }, 'tracking certificates: refresh failed')),
      ...(log ? { log } : {}),
      ...(settings.jobEveryMs ? { everyMs: settings.jobEveryMs } : {}),
    });
    this.db = store.db;
    this.clock = clock;
  }

  /** On the app, before it listens: the challenge route and the guard of custom hosts. */
  register(app: FastifyInstance): void {
    customHostGuard(app, (host) => this.book.isCustomHost(host), (socket) => this.listener?.owns(socket) ?? false, (host) => this.book.isAppHost(host));
    challengeRoute(app, { db: this.db, clock: this.clock });
  }

  /**
   * A host was set or asked to be verified (the API): the guard knows it at once, and the job
   * runs a pass now instead of at its next minute.
   */
  nudge(): void {
    void this.book.refresh().catch(() => undefined);
    void this.job.nudge();
  }

  /** After the app listens: certificates loaded, the HTTPS port open, the job running. */
  async start(app: FastifyInstance): Promise<{ httpsPort: number }> {
    await this.book.start();
    this.listener = await listenTrackingHttps(app, this.book, { port: this.settings.httpsPort, host: this.settings.httpsHost });
    this.job.start();
    return { httpsPort: this.listener.port };
  }

  async stop(): Promise<void> {
    await this.job.stop();
    this.book.close();
    await this.listener?.close();
  }
}
