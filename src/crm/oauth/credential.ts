import { systemClock, type Clock } from '../../common/clock.ts';
import { CrmAuthError, CrmTransientError } from '../connector.ts';
import { tokenRequest, type TokenClient } from './token-endpoint.ts';

/**
 * What a HubSpot or Pipedrive connection made with OAuth stores (sealed, as every CRM token is):
 * one JSON string
 *
 *   {"oauth": "hubspot", "accessToken": …, "refreshToken": …, "expiresAt": <ms>,
 *    "tokenUrl": …, "clientId": …, "clientSecret": …, "clientAuth": "post" | "basic"}
 *
 * The app's id and secret travel with the grant, as in Salesforce's credential
 * (salesforce/credentials.ts): the connector refreshes without the server's settings, and a grant
 * keeps working with the app it was given to. A pasted token (a HubSpot private app's, a Pipedrive
 * API token) is a plain string, never JSON: parseOAuthCredential answers null for it.
 */
export interface OAuthCredential extends TokenClient {
  oauth: 'hubspot' | 'pipedrive';
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
}

export function parseOAuthCredential(sealed: string): OAuthCredential | null {
  if (!sealed.startsWith('{')) return null;
  let v: Partial<OAuthCredential>;
  try {
    v = JSON.parse(sealed) as Partial<OAuthCredential>;
  } catch {
    return null;
  }
  if (v.oauth !== 'hubspot' && v.oauth !== 'pipedrive') return null;
  for (const k of ['accessToken', 'refreshToken', 'tokenUrl', 'clientId', 'clientSecret'] as const) if (typeof v[k] !== 'string' || v[k] === '') throw new Error(`the connection's OAuth credential lacks ${k}: reconnect it`);
  if (typeof v.expiresAt !== 'number' || (v.clientAuth !== 'post' && v.clientAuth !== 'basic')) throw new Error("the connection's OAuth credential is damaged: reconnect it");
  return v as OAuthCredential;
}

/** Refreshed this long before the stated expiry: a request started just before it must not arrive just after. */
export const REFRESH_MARGIN_MS = 60_000;

const labels = { hubspot: 'HubSpot', pipedrive: 'Pipedrive' } as const;

/**
 * The access token of an OAuth connection, refreshed when it is about to expire (HubSpot's live
 * 30 minutes, Pipedrive's an hour), one refresh at a time. Each refresh is stored at once through
 * `save` (sealed again): Pipedrive rotates the refresh token, and the old one is dead once the new
 * one is issued, so a refresh not stored would lose the grant at the next restart.
 *
 *   refused (invalid_grant, BAD_REFRESH_TOKEN, the app's secret changed) → CrmAuthError: the
 *     connection pauses with that reason until an admin re-authorizes (writer.ts)
 *   no answer, 5xx, 429 → CrmTransientError: the writer's backoff, the same grant tried again
 */
export class RefreshingToken {
  private refreshing: Promise<string> | null = null;
  /** A refresh the store refused: stored before the token is used again. */
  private unsaved = false;
  private readonly clock: Clock;

  constructor(
    private cred: OAuthCredential,
    private readonly o: { clock?: Clock; save?: (credential: string) => Promise<void>; timeoutMs?: number } = {},
  ) {
    this.clock = o.clock ?? systemClock;
  }

  async get(): Promise<string> {
    if (this.unsaved) await this.store();
    if (this.clock.now() < this.cred.expiresAt - REFRESH_MARGIN_MS) return this.cred.accessToken;
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async refresh(): Promise<string> {
    const label = labels[this.cred.oauth];
    const r = await tokenRequest(this.cred, { grant_type: 'refresh_token', refresh_token: this.cred.refreshToken }, { clock: this.clock, ...(this.o.timeoutMs ? { timeoutMs: this.o.timeoutMs } : {}) });
    if (!r.ok) {
      const what = `${label}'s token endpoint answered ${r.error} to the refresh`;
      if (r.kind === 'refused') throw new CrmAuthError(`${what}: the grant was revoked or expired; an admin must re-authorize ${label}`);
      throw new CrmTransientError(what, r.retryAfterMs);
    }
    const next: OAuthCredential = {
      ...this.cred,
      accessToken: r.answer.accessToken,
      // A CRM that does not rotate sends none back: the old one stays good.
      refreshToken: r.answer.refreshToken ?? this.cred.refreshToken,
      expiresAt: this.clock.now() + (r.answer.expiresIn ?? 1800) * 1000,
    };
    // Kept in memory first, then stored before use: when the store fails, the rotated refresh
    // token (the old one is dead now) is not lost with it; the next call stores it again.
    this.cred = next;
    this.unsaved = true;
    await this.store();
    return next.accessToken;
  }

  private async store(): Promise<void> {
    try {
      await this.o.save?.(JSON.stringify(this.cred));
      this.unsaved = false;
    } catch (e) {
      throw new CrmTransientError(`the refreshed ${labels[this.cred.oauth]} token could not be stored (${(e as Error).message}); kept in memory and stored at the next request`);
    }
  }
}
