import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import acme from 'acme-client';
import type { Clock } from '../../common/clock.ts';
import type { Db } from '../../store/store.ts';
import { accountKeyContext, type AccountKeyWrapper } from './account-keys.ts';
import type { CertificatePair } from './certificates.ts';
import { acmeAccount, deleteChallenge, insertAcmeAccount, putChallenge, replaceAcmeAccount, setAcmeAccountUrl } from './sql/acme.ts';

/**
 * Obtains a certificate for one host from an ACME CA (RFC 8555) with acme-client, answering the
 * HTTP-01 challenge through the acme_challenge table: every API process serves
 * /.well-known/acme-challenge/<token> from it (challenge-route.ts), so the CA may reach any of them.
 */
export interface AcmeSettings {
  /** The CA's directory (Let's Encrypt: https://acme-v02.api.letsencrypt.org/directory). */
  directoryUrl: string;
  /**
   * PEM of a CA to trust for the directory's own TLS, besides the system's: a private CA or a test
   * CA (Pebble). Given to this client's HTTPS agent only; TLS checks stay on everywhere.
   */
  directoryCa?: string;
  /** The account's contact (expiry notices from the CA). */
  email?: string;
  /** acme-client's polling of a pending order: first wait, most waits (defaults 1 s, 10 tries). */
  pollMinMs?: number;
  pollAttempts?: number;
  /** Each request to the CA ends after this long (default 30 s): a silent CA must not hold the job. */
  requestTimeoutMs?: number;
}

/** A challenge stays answerable this long at most; a crash leaves nothing longer. */
const CHALLENGE_TTL_MS = 15 * 60_000;

export class AcmeIssuer {
  constructor(
    private readonly deps: { db: Db; wrapper: AccountKeyWrapper; settings: AcmeSettings; clock: Clock },
  ) {}

  /** A certificate for `host` (a fresh key each time), or an error in the CA's words. */
  async issue(host: string): Promise<CertificatePair> {
    const { db, settings, clock } = this.deps;
    const { key: accountKey, accountUrl } = await this.account();
    const client = new acme.Client({
      directoryUrl: settings.directoryUrl,
      accountKey,
      ...(accountUrl ? { accountUrl } : {}),
      backoffMin: settings.pollMinMs ?? 1000,
      backoffMax: 30_000,
      backoffAttempts: settings.pollAttempts ?? 10,
    });
    configureHttp(client, { ...(settings.directoryCa ? { ca: settings.directoryCa } : {}), timeoutMs: settings.requestTimeoutMs ?? 30_000 });
    if (!accountUrl) await this.register(client);
    const certKey = await acme.crypto.createPrivateEcdsaKey();
    const [, csr] = await acme.crypto.createCsr({ commonName: host, altNames: [host] }, certKey);
    const certPem = await client.auto({
      csr,
      challengePriority: ['http-01'],
      // acme-client's own check would fetch the token through this machine's resolver and port
      // 80; the CA's validation is the one that counts, and it reports its failure in words.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        await putChallenge(db, { token: challenge.token, keyAuthorization, host, expiresAt: clock.now() + CHALLENGE_TTL_MS });
      },
      challengeRemoveFn: async (_authz, challenge) => {
        await deleteChallenge(db, challenge.token, clock.now());
      },
    });
    return { certPem, keyPem: certKey.toString('utf8') };
  }

  /**
   * Registers the account key (RFC 8555 7.3) and stores the account's URL, before any order, so
   * that a later issuance skips registration. The key may already be registered (an earlier
   * attempt registered it and stopped before storing the URL): the CA then answers 200 with the
   * URL, and acme-client follows with an account update that some CAs refuse as empty; the URL
   * is known all the same, and that is all we need.
   */
  private async register(client: acme.Client): Promise<void> {
    const { db, settings } = this.deps;
    try {
      await client.createAccount({ termsOfServiceAgreed: true, ...(settings.email ? { contact: [`mailto:${settings.email}`] } : {}) });
    } catch (e) {
      if (!hasAccountUrl(client)) throw e;
    }
    await setAcmeAccountUrl(db, settings.directoryUrl, client.getAccountUrl());
  }

  /** The installation's account key for this directory, made and stored wrapped on first use. */
  private async account(): Promise<{ key: Buffer; accountUrl: string | null }> {
    const { db, wrapper, settings } = this.deps;
    const context = accountKeyContext(settings.directoryUrl);
    let row = await acmeAccount(db, settings.directoryUrl);
    if (!row) {
      await insertAcmeAccount(db, settings.directoryUrl, wrapper.wrap(await acme.crypto.createPrivateEcdsaKey(), context));
      row = (await acmeAccount(db, settings.directoryUrl))!;
    }
    try {
      return { key: wrapper.unwrap(row.wrappedKey, context), accountUrl: row.accountUrl };
    } catch {
      // The master key was replaced without `cadenza keys rotate` (which rewraps this key too,
      // account-keys.ts), or the row predates rotations rewrapping it. An ACME account holds
      // nothing a certificate depends on: register a new one rather than fail every issuance.
      await replaceAcmeAccount(db, settings.directoryUrl, wrapper.wrap(await acme.crypto.createPrivateEcdsaKey(), context));
      row = (await acmeAccount(db, settings.directoryUrl))!;
      return { key: wrapper.unwrap(row.wrappedKey, context), accountUrl: null };
    }
  }
}

function hasAccountUrl(client: acme.Client): boolean {
  try {
    client.getAccountUrl();
    return true;
  } catch {
    return false;
  }
}

/**
 * This client's requests: a deadline each, and, with `ca`, that CA trusted (beside the system's
 * roots) for the directory's TLS. acme-client sends every request through HttpClient.request with
 * axios options; what is added there is this client's alone, where axios's defaults would be the
 * whole module's. TLS checks stay on.
 */
function configureHttp(client: acme.Client, o: { ca?: string; timeoutMs: number }): void {
  // `ca` replaces the default roots: keep them beside the added CA.
  const agent = o.ca ? new Agent({ ca: [...rootCertificates, o.ca], keepAlive: false }) : undefined;
  const http = (client as unknown as { http: { request(url: string, method: string, opts?: Record<string, unknown>): Promise<unknown> } }).http;
  const request = http.request.bind(http);
  http.request = (url, method, opts = {}) => request(url, method, { ...opts, timeout: o.timeoutMs, ...(agent ? { httpsAgent: agent } : {}) });
}
