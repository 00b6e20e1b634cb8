import * as oauth from 'oauth4webapi';
import type { Clock } from '../../common/clock.ts';
import { cadenzaError, isCadenzaError, type CadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { AccessTokenProvider } from '../access-token.ts';
import { pauseMailbox } from '../health/pause.ts';
import type { Store } from '../../store/store.ts';
import { parseMailboxSettings } from '../settings.ts';
import type { Credential, Vault } from '../vault.ts';
import type { OAuthClient, OAuthClients } from './client.ts';
import { oauthProviders, refreshScopes, type OAuthMode, type OAuthProviderName } from './providers.ts';
import { classifyTokenFailure, type TokenFailure } from './token-errors.ts';

/**
 * Access tokens for OAuth mailboxes, behind the one interface every transport and sync connector
 * already takes (AccessTokenProvider / TokenSource: `({ forceRefresh }) => token`):
 *
 * - a cached token is handed out until `refreshAheadMs` before it expires; then it is refreshed
 *   with the refresh token from the vault, and the new access token (and a rotated refresh token,
 *   Microsoft's on every use, Google's sometimes) is sealed back into the vault;
 * - single flight: concurrent callers of one mailbox share one refresh request;
 * - a token minted less than `minRefreshGapMs` ago is not refreshed again even when a caller
 *   forces it (a server refusing a fresh token has another problem; refreshing in a loop would
 *   not fix it);
 * - a transient failure of the token endpoint is retried with exponential backoff and jitter, then
 *   reported as transient (`transient: true`), and the endpoint is left alone for a cool-down;
 * - a dead grant (invalid_grant; or the client itself refused) pauses the mailbox with a reason a
 *   person can act on, and every later call fails at once with MAILBOX_AUTH_FAILED without asking
 *   the provider again, until the mailbox is reconnected (a new refresh token in the vault).
 *
 * Tokens never reach a log: errors carry the provider's error code, never a token.
 *
 * Across processes: the vault is the shared cache (a token another process just refreshed is
 * reused). Two processes refreshing one mailbox at once both succeed (the provider keeps the older
 * refresh token valid; the last write wins); with one lease owner per mailbox and role this is rare.
 */

export interface MailboxTokensOptions {
  store: Store;
  vault: Vault;
  clients: OAuthClients;
  clock: Clock;
  random: Random;
  log?: Logger;
  /** Refresh this long before the access token expires (default 5 minutes). */
  refreshAheadMs?: number;
  /** Refresh attempts per call before giving up as transient (default 3). */
  attempts?: number;
  /** First backoff between attempts; doubles each time, with full jitter (default 500 ms). */
  backoffMs?: number;
  /** After a transient failure, calls fail at once for this long (default 30 s). */
  coolDownMs?: number;
  /** A token younger than this is handed out even on forceRefresh (default 30 s). */
  minRefreshGapMs?: number;
  /** How often a dead mailbox's vault entry is read again to notice a reconnect (default 60 s). */
  deadRecheckMs?: number;
}

interface MailboxState {
  token?: string;
  expiresAt?: number;
  mintedAt?: number;
  inflight?: Promise<string>;
  coolDownUntil?: number;
  lastTransient?: string;
  /** The grant is dead: the refresh token that was refused, and the error every call gets. */
  dead?: { refreshToken: string | undefined; error: CadenzaError; recheckAt: number };
}

interface OAuthMailbox {
  id: string;
  workspaceId: string;
  email: string;
  provider: OAuthProviderName;
  mode: OAuthMode;
}

type OAuthCredential = Extract<Credential, { kind: 'oauth' }>;

export class MailboxTokens {
  private readonly state = new Map<string, MailboxState>();
  private readonly o: Required<Omit<MailboxTokensOptions, 'log'>> & { log?: Logger };
  /** Refresh requests sent to a token endpoint (for tests and metrics). */
  refreshes = 0;

  constructor(o: MailboxTokensOptions) {
    this.o = { refreshAheadMs: 5 * 60_000, attempts: 3, backoffMs: 500, coolDownMs: 30_000, minRefreshGapMs: 30_000, deadRecheckMs: 60_000, ...o };
  }

  /** The AccessTokenProvider for one mailbox, for a transport or a sync connector. */
  forMailbox(mailboxId: string): AccessTokenProvider {
    return (opts) => this.accessToken(mailboxId, opts);
  }

  /** Drops what is cached for a mailbox (it was reconnected or removed). */
  forget(mailboxId: string): void {
    this.state.delete(mailboxId);
  }

  async accessToken(mailboxId: string, opts: { forceRefresh: boolean } = { forceRefresh: false }): Promise<string> {
    let st = this.state.get(mailboxId);
    if (!st) this.state.set(mailboxId, (st = {}));
    const now = this.o.clock.now();
    if (st.dead) {
      if (now < st.dead.recheckAt) throw st.dead.error;
      // Reconnected since (by another process, or through a flow that did not call forget)?
      const cred = await this.o.vault.get(mailboxId);
      if (cred?.kind === 'oauth' && cred.refreshToken && cred.refreshToken !== st.dead.refreshToken) {
        delete st.dead;
      } else {
        st.dead.recheckAt = now + this.o.deadRecheckMs;
        throw st.dead.error;
      }
    }
    if (st.token && st.expiresAt !== undefined && st.mintedAt !== undefined) {
      const fresh = st.expiresAt - now > this.o.refreshAheadMs;
      if (fresh && (!opts.forceRefresh || now - st.mintedAt < this.o.minRefreshGapMs)) return st.token;
    }
    if (st.inflight) return st.inflight;
    if (st.coolDownUntil !== undefined && now < st.coolDownUntil) throw transient(mailboxId, `token endpoint unavailable (${st.lastTransient ?? 'unknown'}); next try in ${Math.ceil((st.coolDownUntil - now) / 1000)} s`);
    const flight = this.refresh(mailboxId, st, opts.forceRefresh).finally(() => {
      if (st.inflight === flight) delete st.inflight;
    });
    st.inflight = flight;
    return flight;
  }

  private async refresh(mailboxId: string, st: MailboxState, forced: boolean): Promise<string> {
    const mb = await this.mailbox(mailboxId);
    const cred = await this.o.vault.get(mailboxId);
    if (cred?.kind !== 'oauth') {
      throw cadenzaError('MAILBOX_AUTH_FAILED', `mailbox ${mb.email} has no OAuth grant in the vault; connect it again`, { mailboxId, reconnect: true });
    }
    const now = this.o.clock.now();
    // Another process (or an earlier run) may have refreshed it already.
    if (!forced && cred.expiresAt !== undefined && cred.expiresAt - now > this.o.refreshAheadMs) {
      this.remember(st, cred.accessToken, cred.expiresAt, now - this.o.minRefreshGapMs);
      return cred.accessToken;
    }
    if (!cred.refreshToken) return this.die(mb, st, cred, { kind: 'revoked', error: 'no_refresh_token', status: null });

    let client: OAuthClient;
    try {
      client = await this.o.clients.get(mb.provider);
    } catch (e) {
      // No client configured: the operator must fix it (not the grant's fault, not transient
      // either). Anything else is a failed discovery (an override URL only): try again later.
      if (isCadenzaError(e, 'CONFIG_INVALID')) throw e;
      throw transient(mailboxId, `${oauthProviders[mb.provider].label} metadata unavailable: ${(e as Error).message}`);
    }
    const profile = oauthProviders[mb.provider];
    let failure: TokenFailure | undefined;
    for (let attempt = 0; attempt < this.o.attempts; attempt++) {
      if (attempt > 0) await this.o.clock.sleep(this.o.random.int(0, this.o.backoffMs * 2 ** (attempt - 1)));
      const ro = client.requestOptions();
      try {
        this.refreshes++;
        const params = profile.refreshWithScope ? { additionalParameters: { scope: refreshScopes(profile.scopes(mb.mode), cred.scope) } } : {};
        const res = await oauth.refreshTokenGrantRequest(client.as, client.client, client.auth, cred.refreshToken, { ...ro, ...params });
        const tr = await oauth.processRefreshTokenResponse(client.as, client.client, res);
        const minted = this.o.clock.now();
        const expiresAt = minted + (tr.expires_in ?? 3600) * 1000;
        const next: OAuthCredential = {
          kind: 'oauth',
          accessToken: tr.access_token,
          // Rotated refresh tokens must be kept: Microsoft replaces it on every use.
          refreshToken: tr.refresh_token ?? cred.refreshToken,
          expiresAt,
          ...(tr.scope ?? cred.scope ? { scope: tr.scope ?? cred.scope } : {}),
        };
        await this.o.vault.put(mb.workspaceId, mb.id, next);
        this.remember(st, next.accessToken, expiresAt, minted);
        delete st.coolDownUntil;
        delete st.lastTransient;
        return next.accessToken;
      } catch (e) {
        failure = classifyTokenFailure(e);
        // An answer that failed validation is the provider's (or a proxy's) fault, not the
        // grant's: retried like an outage, with the cool-down keeping it from becoming a storm.
        if (failure.kind === 'revoked' || failure.kind === 'client') return this.die(mb, st, cred, failure);
        this.o.log?.warn({ mailboxId, provider: mb.provider, error: failure.error, status: failure.status, attempt: attempt + 1 }, 'token refresh failed; will retry');
      } finally {
        ro.cancel();
      }
    }
    st.coolDownUntil = this.o.clock.now() + this.o.coolDownMs;
    st.lastTransient = failure ? `${failure.error}${failure.status ? ` ${failure.status}` : ''}` : 'unknown';
    throw transient(mailboxId, `${profile.label} token endpoint unavailable after ${this.o.attempts} attempts (${st.lastTransient})`);
  }

  /** The grant is dead: pause the mailbox once, remember, and fail this call and the next ones. */
  private async die(mb: OAuthMailbox, st: MailboxState, cred: OAuthCredential, f: TokenFailure): Promise<never> {
    const label = oauthProviders[mb.provider].label;
    const reason =
      f.kind === 'client'
        ? `${label} refused Cadenza's OAuth client (${f.error}); check the client id and secret, then reconnect the mailbox`
        : `${label} access was revoked or expired; reconnect the mailbox`;
    const error = cadenzaError('MAILBOX_AUTH_FAILED', `${mb.email}: ${reason}`, { mailboxId: mb.id, reconnect: true, oauthError: f.error });
    const now = this.o.clock.now();
    st.dead = { refreshToken: cred.refreshToken, error, recheckAt: now + this.o.deadRecheckMs };
    delete st.token;
    const paused = await pauseMailbox(this.o.store.db, mb.id, reason, now).catch(() => false);
    if (paused) this.o.log?.warn({ mailboxId: mb.id, provider: mb.provider, error: f.error }, 'mailbox paused: OAuth grant refused');
    throw error;
  }

  private remember(st: MailboxState, token: string, expiresAt: number, mintedAt: number): void {
    st.token = token;
    st.expiresAt = expiresAt;
    st.mintedAt = mintedAt;
  }

  private async mailbox(mailboxId: string): Promise<OAuthMailbox> {
    const row = await this.o.store.db.selectFrom('mailbox').select(['id', 'workspace_id', 'email', 'provider', 'settings']).where('id', '=', mailboxId).executeTakeFirst();
    if (!row) throw cadenzaError('NOT_FOUND', `mailbox ${mailboxId} not found`, { mailboxId });
    const settings = parseMailboxSettings(row.settings);
    // gmail and graph mailboxes connected before settings.oauth existed are still unambiguous.
    const provider = settings.oauth?.provider ?? (row.provider === 'gmail' ? 'google' : row.provider === 'graph' ? 'microsoft' : undefined);
    if (!provider) throw cadenzaError('MAILBOX_AUTH_FAILED', `mailbox ${row.email} was not connected with OAuth`, { mailboxId, reconnect: true });
    return { id: row.id, workspaceId: row.workspace_id, email: row.email, provider, mode: settings.oauth?.mode ?? (row.provider === 'smtp_imap' ? 'imap' : 'api') };
  }
}

function transient(mailboxId: string, message: string): CadenzaError {
  // `transient` on the error itself: mailbox/providers/call.ts and mailbox/imap/connect.ts read it.
  return Object.assign(cadenzaError('MAILBOX_UNAVAILABLE', message, { mailboxId, transient: true }), { transient: true });
}
