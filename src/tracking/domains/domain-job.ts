import type { Clock, TimerHandle } from '../../common/clock.ts';
import { coalesce } from '../../common/coalesce.ts';
import type { Logger } from '../../common/logger.ts';
import type { Leases } from '../../ops/leases.ts';
import type { Db } from '../../store/store.ts';
import { leafValidity, sealCertificate, type CertificatePair, type SecretSealer } from './certificates.ts';
import { checkCname, type CnameResolver } from './cname-check.ts';
import { afterFailure, afterIssued, backoffMs, nextStep } from './policy.ts';
import { dueDomains, storeCertificate, updateState, type DomainRow } from './sql/tracking-domain.ts';

/**
 * The periodic job that moves tracking hosts along (policy.ts): verifies CNAMEs, obtains
 * certificates, renews them when a third of their lifetime is left, and backs off on failure.
 * One process at a time does it, under the lease `tracking-domains` (ops/leases.ts); the others'
 * passes find the lease held and do nothing. Each host's outcome is written only if the host is
 * still the one the step read (the API may have removed or replaced it meanwhile).
 */
export interface DomainJobDeps {
  db: Db;
  leases: Leases;
  /** This process's lease owner id. */
  owner: string;
  clock: Clock;
  resolver: CnameResolver;
  /** The name every tracking host must be a CNAME to (CADENZA_PUBLIC_HOST, else the public URL's host). */
  publicHost: string;
  /** Obtains a certificate (acme-issuer.ts); declared here, the user. */
  issuer: { issue(host: string): Promise<CertificatePair> };
  vault: SecretSealer;
  /** A certificate was stored: this process's listener loads it now (the others at their refresh). */
  onIssued?: (host: string) => void;
  log?: Logger;
  /** How often the job looks for due hosts (default 60 s). */
  everyMs?: number;
}

const LEASE = 'tracking-domains';
/** Held across one pass; an issuance polls the CA for a minute at most, so this is ample. */
const LEASE_TTL_MS = 10 * 60_000;
/** Hosts taken per pass, so one pass stays within its lease. */
const BATCH = 20;

export type StepOutcome = { host: string; state: DomainRow['state']; reason: string | null };

export class DomainJob {
  private timer: TimerHandle | undefined;
  private stopped = false;
  private readonly pass: () => Promise<void>;
  private last: StepOutcome[] = [];
  private current: Promise<unknown> = Promise.resolve();

  constructor(private readonly d: DomainJobDeps) {
    this.pass = coalesce(
      async () => {
        if (this.stopped) return;
        const run = this.runOnce();
        this.current = run.catch(() => undefined);
        this.last = await run;
      },
      (e) => d.log?.error({ err: e }, 'tracking domains: pass failed'),
    );
  }

  start(): void {
    const tick = () => {
      this.timer = this.d.clock.setTimer(this.d.everyMs ?? 60_000, () => {
        void this.pass().finally(() => !this.stopped && tick());
      });
    };
    void this.pass();
    tick();
  }

  /** A pass soon (a host was set or asked to be verified); resolves when it has run. */
  async nudge(): Promise<StepOutcome[]> {
    await this.pass();
    return this.last;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.current;
  }

  /** One pass: every due host, one step each, under the lease. Returns what each step did. */
  async runOnce(): Promise<StepOutcome[]> {
    const lease = await this.d.leases.acquire(LEASE, this.d.owner, LEASE_TTL_MS);
    if (!lease) return [];
    try {
      const out: StepOutcome[] = [];
      for (const row of await dueDomains(this.d.db, this.d.clock.now(), BATCH)) out.push(await this.step(row));
      return out;
    } finally {
      await this.d.leases.release(lease);
    }
  }

  private async step(row: DomainRow): Promise<StepOutcome> {
    const { clock, log } = this.d;
    const now = clock.now();
    const what = nextStep(row, now);
    if (what === 'expire') {
      const reason = `the certificate of ${row.host} expired before it could be renewed${row.reason ? ` (${row.reason})` : ''}`;
      await updateState(this.d.db, row, { state: 'failed', reason, attempts: row.attempts + 1, nextAttemptAt: now + backoffMs(row.attempts + 1) }, now);
      log?.warn({ host: row.host }, reason);
      return { host: row.host, state: 'failed', reason };
    }
    if (what === 'verify') {
      const v = await checkCname(this.d.resolver, row.host, this.d.publicHost);
      if (!v.ok) return this.fail(row, 'dns', v.reason);
      const state = row.notAfter !== null && row.notAfter > now ? 'renewing' : 'issuing';
      await updateState(this.d.db, row, { state, reason: null, attempts: row.attempts, nextAttemptAt: now + LEASE_TTL_MS }, now);
      row = { ...row, state };
    }
    let pair: CertificatePair;
    let validity: { notBefore: number; notAfter: number };
    try {
      pair = await this.d.issuer.issue(row.host);
      validity = leafValidity(pair.certPem, row.host);
    } catch (e) {
      return this.fail(row, 'issue', `the certificate authority did not issue a certificate for ${row.host}: ${describe(e)}`);
    }
    const sealed = await sealCertificate(this.d.vault, row.workspaceId, row.host, pair);
    const next = afterIssued(validity);
    const done = await storeCertificate(this.d.db, row, { sealed, ...validity, nextAttemptAt: next.nextAttemptAt }, clock.now());
    if (!done) return { host: row.host, state: row.state, reason: 'the host was changed while its certificate was issued' };
    log?.info({ host: row.host, notAfter: new Date(validity.notAfter).toISOString() }, 'tracking domain: certificate stored');
    this.d.onIssued?.(row.host);
    return { host: row.host, state: 'active', reason: null };
  }

  private async fail(row: DomainRow, step: 'dns' | 'issue', reason: string): Promise<StepOutcome> {
    const now = this.d.clock.now();
    const f = afterFailure(row, now, step);
    await updateState(this.d.db, row, { ...f, reason }, now);
    this.d.log?.warn({ host: row.host, state: f.state, attempts: f.attempts }, `tracking domain: ${reason}`);
    return { host: row.host, state: f.state, reason };
  }
}

/** An error in one line of plain words, bounded (a CA's problem document can be long). */
function describe(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/\s+/g, ' ').slice(0, 300);
}
