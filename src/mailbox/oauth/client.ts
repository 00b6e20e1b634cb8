import * as oauth from 'oauth4webapi';
import { systemClock, type Clock } from '../../common/clock.ts';
import type { Config } from '../../common/config.ts';
import { cadenzaError } from '../../common/errors.ts';
import { isMultiTenant, oauthProviders, type OAuthProviderName, type OAuthProviderProfile } from './providers.ts';

/**
 * Cadenza as an OAuth client of one provider: the authorization server's metadata, the client
 * registration (id + secret from the configuration) and the oauth4webapi options every request
 * takes. Built once per provider and process (`OAuthClients`).
 */

export interface OAuthClientSettings {
  clientId: string;
  clientSecret: string;
  /** Microsoft only: common, organizations, consumers or a tenant id. */
  tenant?: string;
  /**
   * Google: an issuer URL; Microsoft: a login host. Set only to reach an emulator; the metadata is
   * then read by OpenID discovery instead of the documented endpoints.
   */
  discoveryBase?: string;
}

export type OAuthSettings = Partial<Record<OAuthProviderName, OAuthClientSettings>>;

/** The providers the configuration has a client for (both id and secret set). */
export function oauthSettingsFrom(config: Config): OAuthSettings {
  const s: OAuthSettings = {};
  if (config.CADENZA_GOOGLE_CLIENT_ID && config.CADENZA_GOOGLE_CLIENT_SECRET) {
    s.google = {
      clientId: config.CADENZA_GOOGLE_CLIENT_ID,
      clientSecret: config.CADENZA_GOOGLE_CLIENT_SECRET,
      ...(config.CADENZA_GOOGLE_ISSUER ? { discoveryBase: config.CADENZA_GOOGLE_ISSUER } : {}),
    };
  }
  if (config.CADENZA_MICROSOFT_CLIENT_ID && config.CADENZA_MICROSOFT_CLIENT_SECRET) {
    s.microsoft = {
      clientId: config.CADENZA_MICROSOFT_CLIENT_ID,
      clientSecret: config.CADENZA_MICROSOFT_CLIENT_SECRET,
      tenant: config.CADENZA_MICROSOFT_TENANT,
      ...(config.CADENZA_MICROSOFT_LOGIN_URL ? { discoveryBase: config.CADENZA_MICROSOFT_LOGIN_URL } : {}),
    };
  }
  return s;
}

export interface OAuthClient {
  profile: OAuthProviderProfile;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  /** Options for every oauth4webapi request: the deadline, and plain http for a loopback emulator. */
  requestOptions(): { signal: AbortSignal; [oauth.allowInsecureRequests]?: boolean; cancel(): void };
}

export interface OAuthClientsOptions {
  clock?: Clock;
  /** Deadline of one request to the authorization server. */
  timeoutMs?: number;
}

/** One OAuthClient per configured provider, metadata resolved on first use. */
export class OAuthClients {
  private readonly built = new Map<OAuthProviderName, Promise<OAuthClient>>();
  private readonly clock: Clock;
  private readonly timeoutMs: number;

  constructor(
    private readonly settings: OAuthSettings,
    opts: OAuthClientsOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.timeoutMs ?? 15_000;
  }

  configured(provider: OAuthProviderName): boolean {
    return !!this.settings[provider];
  }

  get(provider: OAuthProviderName): Promise<OAuthClient> {
    let p = this.built.get(provider);
    if (!p) {
      p = this.build(provider);
      // A failed discovery (the emulator not up yet, a network blip) is tried again next time.
      p.catch(() => this.built.delete(provider));
      this.built.set(provider, p);
    }
    return p;
  }

  private async build(provider: OAuthProviderName): Promise<OAuthClient> {
    const s = this.settings[provider];
    const profile = oauthProviders[provider];
    if (!s) {
      const env = provider === 'google' ? 'CADENZA_GOOGLE_CLIENT_ID and CADENZA_GOOGLE_CLIENT_SECRET' : 'CADENZA_MICROSOFT_CLIENT_ID and CADENZA_MICROSOFT_CLIENT_SECRET';
      throw cadenzaError('CONFIG_INVALID', `${profile.label} mailboxes are not configured: set ${env} (docs/mailboxes.md)`, { provider });
    }
    const tenant = s.tenant ?? 'common';
    const insecure = s.discoveryBase ? isLoopbackHttp(s.discoveryBase) : false;
    const options = () => this.options(insecure);
    const as = s.discoveryBase ? await discover(provider, s.discoveryBase, tenant, options) : profile.metadata(tenant);
    if (provider === 'microsoft' && isMultiTenant(tenant)) {
      // A multi-tenant issuer is a template ('…/{tenantid}/v2.0'): the ID token names the user's
      // own tenant in `tid` and `iss`, and the issuer to expect is the template filled with it.
      // oauth4webapi takes that through its (undocumented in the types) _expectedIssuer hook.
      const hook = (oauth as unknown as { _expectedIssuer: symbol })._expectedIssuer;
      Object.assign(as, {
        [hook]: (result: { claims: Record<string, unknown> }) => {
          const tid = result.claims.tid;
          return typeof tid === 'string' && /^[A-Za-z0-9-]+$/.test(tid) ? as.issuer.replace('{tenantid}', tid) : as.issuer;
        },
      });
    }
    // oauth4webapi checks iat/exp of the ID token against its own idea of now; align it with the
    // injected clock so that a simulated clock and the emulator agree.
    const skew = Math.round((this.clock.now() - systemClock.now()) / 1000);
    const client: oauth.Client = { client_id: s.clientId, ...(skew !== 0 ? { [oauth.clockSkew]: skew } : {}) };
    return { profile, as, client, auth: oauth.ClientSecretPost(s.clientSecret), requestOptions: options };
  }

  private options(insecure: boolean) {
    const ac = new AbortController();
    const timer = this.clock.setTimer(this.timeoutMs, () => ac.abort(new Error(`no answer within ${this.timeoutMs} ms`)));
    return { signal: ac.signal, ...(insecure ? { [oauth.allowInsecureRequests]: true } : {}), cancel: () => timer.cancel() };
  }
}

async function discover(
  provider: OAuthProviderName,
  base: string,
  tenant: string,
  options: () => { signal: AbortSignal; cancel(): void },
): Promise<oauth.AuthorizationServer> {
  const root = base.replace(/\/+$/, '');
  // Google: the issuer is the discovery root. Microsoft: one issuer per tenant under the login host,
  // and for the multi-tenant names the document's issuer is the '{tenantid}' template.
  const issuer = provider === 'google' ? new URL(root) : new URL(`${root}/${encodeURIComponent(tenant)}/v2.0`);
  const o = options();
  try {
    const res = await oauth.discoveryRequest(issuer, { ...o, algorithm: 'oidc' });
    if (provider === 'microsoft' && isMultiTenant(tenant)) {
      const as = await oauth.processDiscoveryResponse((oauth as unknown as { _nodiscoverycheck: URL })._nodiscoverycheck, res);
      if (as.issuer !== `${root}/{tenantid}/v2.0`) throw cadenzaError('CONFIG_INVALID', `unexpected issuer ${as.issuer} in ${issuer.href} discovery`);
      return as;
    }
    return await oauth.processDiscoveryResponse(issuer, res);
  } finally {
    o.cancel();
  }
}

/** Plain http is allowed only for a server on this machine (an emulator). */
function isLoopbackHttp(url: string): boolean {
  const u = new URL(url);
  return u.protocol === 'http:' && (u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]');
}
