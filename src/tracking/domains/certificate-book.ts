import { createSecureContext, type SecureContext } from 'node:tls';
import type { Clock, TimerHandle } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import type { Db } from '../../store/store.ts';
import { openCertificate, type SecretSealer } from './certificates.ts';
import { domainByHost, hostVersions } from './sql/tracking-domain.ts';

/**
 * The certificates this process serves, by host, for the HTTPS listener's SNICallback. Read from
 * the database (sealed, opened with the vault) and swapped in place when a host's certificate
 * version changes: a renewal, here or in another process, is served on the next handshake, with
 * no restart. Refreshed every `everyMs` and at once when this process stored a certificate.
 */
export class CertificateBook {
  private readonly contexts = new Map<string, { version: number; context: SecureContext }>();
  /** Every custom host, with a certificate or not yet. */
  private known = new Set<string>();
  /** The custom hosts that serve the whole app (an agency client's white-label name, 0103). */
  private appHosts = new Set<string>();
  private timer: TimerHandle | undefined;
  private refreshing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly deps: { db: Db; vault: SecretSealer; clock: Clock; log?: Logger; everyMs?: number }) {}

  /** For https.createServer({ SNICallback }): the context of the host asked for, or a failed handshake. */
  readonly sniCallback = (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void): void => {
    const hit = this.contexts.get(servername.toLowerCase().replace(/\.$/, ''));
    if (hit) cb(null, hit.context);
    else cb(new Error(`no certificate for ${servername.slice(0, 253)}`));
  };

  /** A workspace's custom host, served or not yet (the host guard answers only tracking routes on them). */
  isCustomHost(host: string): boolean {
    return this.known.has(host);
  }

  /** An agency client's app host: the guard lets the app answer on it, under the client's branding. */
  isAppHost(host: string): boolean {
    return this.appHosts.has(host);
  }

  /** Hosts whose certificate is served now. */
  hosts(): string[] {
    return [...this.contexts.keys()];
  }

  /** Loads what changed since the last refresh; one refresh at a time (a second call joins it). */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Refreshes now, then every `everyMs` (default 10 s) until close(). */
  async start(): Promise<void> {
    await this.refresh();
    const tick = () => {
      this.timer = this.deps.clock.setTimer(this.deps.everyMs ?? 10_000, () => {
        void this.refresh()
          .catch((e: unknown) => this.deps.log?.warn({ err: e }, 'tracking certificates: refresh failed'))
          .finally(() => !this.closed && tick());
      });
    };
    tick();
  }

  close(): void {
    this.closed = true;
    this.timer?.cancel();
  }

  private async load(): Promise<void> {
    const { db, vault, log } = this.deps;
    const all = await hostVersions(db);
    this.known = new Set(all.map((h) => h.host));
    this.appHosts = new Set(all.filter((h) => h.purpose === 'app').map((h) => h.host));
    const seen = new Set<string>();
    for (const s of all) {
      if (!s.serving) continue;
      seen.add(s.host);
      if (this.contexts.get(s.host)?.version === s.certVersion) continue;
      const row = await domainByHost(db, s.host);
      if (!row?.sealedCert || row.workspaceId !== s.workspaceId) continue;
      try {
        const pair = await openCertificate(vault, row.workspaceId, row.host, row.sealedCert);
        this.contexts.set(row.host, { version: row.certVersion, context: createSecureContext({ cert: pair.certPem, key: pair.keyPem }) });
      } catch (e) {
        // One host's broken certificate must not stop the others from being served.
        log?.error({ err: e, host: row.host }, 'tracking certificates: a stored certificate could not be loaded');
      }
    }
    for (const host of [...this.contexts.keys()]) if (!seen.has(host)) this.contexts.delete(host);
  }
}
