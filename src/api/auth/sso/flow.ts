/**
 * Signing in with a workspace's OpenID Connect provider (OpenID Connect Core 1.0, authorization
 * code flow, §3.1), through oauth4webapi like the mailbox connect (src/mailbox/oauth/flow.ts):
 *
 *   start     the workspace is named, or is the one whose client app host the sign-in page is on,
 *             or is found by the address's domain; the redirect URI is on the host the sign-in
 *             started on (callback-host.ts: the public URL's, or that workspace's own verified app
 *             host, never a name taken from the request); a random state, nonce and
 *             S256 PKCE verifier (RFC 7636) are kept in oauth_flow (10 minutes, single use), bound
 *             to the browser by the hash of a random cookie; the browser goes to the provider.
 *   complete  the provider sends the browser back with code + state: the flow is consumed in the
 *             same browser only, on the host its redirect URI names, the code is exchanged with the verifier and the client secret,
 *             and the ID token is checked: its RS256 signature against the provider's JWKS, its
 *             issuer, audience, expiry and nonce (§3.1.3.7). Then who it is (§5.7: the email is
 *             trusted only when email_verified is true): an existing account signs in only when it
 *             is a member of this workspace already (and, when it belongs to other workspaces too,
 *             only for a domain this workspace has proven by DNS, domain-proof.ts); a newcomer (no
 *             account yet) whose domain the workspace admits and has proven gets an account and a
 *             membership with the role their groups map to (just in time); anyone else (an
 *             existing account that is not a member here included) is refused in words, and the
 *             refusal is in the audit log.
 *
 * The issuer is a URL a workspace admin typed: it goes through the installation's destination
 * policy (common/destination-policy.ts) when saved, and every request to the provider connects only
 * to an address that policy allows (vetted-fetch.ts), as webhook deliveries do.
 */
import * as oauth from 'oauth4webapi';
import { sql } from 'kysely';
import type { Clock } from '../../../common/clock.ts';
import { systemClock } from '../../../common/clock.ts';
import { vetDestination, type DestinationPolicy, type ResolveHost } from '../../../common/destination-policy.ts';
import { cadenzaError, isCadenzaError } from '../../../common/errors.ts';
import { newId } from '../../../common/ids.ts';
import type { Random } from '../../../common/random.ts';
import { consumeFlow, purgeFlows, saveFlow } from '../../../mailbox/oauth/flow-store.ts';
import type { Db } from '../../../store/store.ts';
import { recordAudit } from '../../audit/audit-log.ts';
import type { SecretSealer } from '../../webhooks/secrets.ts';
import { addMembership, normalizeAccountEmail } from '../accounts.ts';
import { secretHash } from '../tokens.ts';
import { vettedFetch } from './vetted-fetch.ts';
import { chooseCallback, hostRow, landingBase, workspaceOfAppHost, SSO_CALLBACK_PATH, type CallbackSettings } from './callback-host.ts';
import { isDomainVerified } from './domain-proof.ts';
import { emailDomain, mappedRole, ssoProvider, workspaceForDomain, type SsoProvider } from './settings.ts';

export interface SsoDeps {
  db: Db;
  sealer: SecretSealer;
  clock: Clock;
  random: Random;
  /** Where the issuer may be: the installation's outbound policy (loopback and private only when allowed). */
  destinations: DestinationPolicy;
  resolve?: ResolveHost;
  /** The public URL and the client app hosts' HTTPS port: where a sign-in may come back to (callback-host.ts). */
  callback: CallbackSettings;
  /** Deadline of one request to the provider (default 15 s). */
  timeoutMs?: number;
}

const FLOW_TTL_MS = 10 * 60_000;

/** The issuer as a URL Cadenza may reach: https, or http on an allowed loopback/private host; vetted by the destination policy. */
export async function checkIssuer(issuer: string, d: Pick<SsoDeps, 'destinations' | 'resolve'>): Promise<URL> {
  let u: URL;
  try {
    u = new URL(issuer);
  } catch {
    throw cadenzaError('INVALID_INPUT', `the issuer is not a URL: ${JSON.stringify(issuer)}`, { field: 'issuer' });
  }
  const privateOk = d.destinations.allow.has('loopback') || d.destinations.allow.has('private');
  if (u.protocol !== 'https:' && !(privateOk && u.protocol === 'http:')) throw cadenzaError('INVALID_INPUT', 'the issuer URL must be https', { field: 'issuer' });
  if (u.username || u.password || u.search || u.hash) throw cadenzaError('INVALID_INPUT', 'the issuer URL carries no user name, password, query or fragment (OpenID Connect Discovery §2)', { field: 'issuer' });
  await vetDestination(u.hostname, d.destinations, d.resolve).catch((e: unknown) => {
    if (isCadenzaError(e)) throw cadenzaError('INVALID_INPUT', e.message, { field: 'issuer' });
    throw cadenzaError('INVALID_INPUT', `the issuer's host ${u.hostname} could not be resolved`, { field: 'issuer' });
  });
  return u;
}

interface Client {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  options(): { signal: AbortSignal; [oauth.customFetch]: ReturnType<typeof vettedFetch>; [oauth.allowInsecureRequests]?: boolean; cancel(): void };
}

async function clientOf(d: SsoDeps, p: SsoProvider): Promise<Client> {
  const issuer = await checkIssuer(p.issuer, d);
  const insecure = issuer.protocol === 'http:';
  const timeoutMs = d.timeoutMs ?? 15_000;
  // Every request (discovery, token, JWKS) connects only where the destination policy allows.
  const fetchVetted = vettedFetch(d.destinations);
  const options = () => {
    const ac = new AbortController();
    const timer = d.clock.setTimer(timeoutMs, () => ac.abort(new Error(`no answer within ${timeoutMs} ms`)));
    return { signal: ac.signal, [oauth.customFetch]: fetchVetted, ...(insecure ? { [oauth.allowInsecureRequests]: true } : {}), cancel: () => timer.cancel() };
  };
  const o = options();
  let as: oauth.AuthorizationServer;
  try {
    // The document's issuer must equal the configured one (Discovery §4.3): oauth4webapi checks.
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...o, algorithm: 'oidc' }));
  } catch (e) {
    throw cadenzaError('UNAUTHENTICATED', `the identity provider at ${issuer.origin} could not be read (${(e as Error).message}); ask your admin to check the single sign-on settings`, { issuer: p.issuer });
  } finally {
    o.cancel();
  }
  // ID token iat/exp are checked against the injected clock, as the mailbox flow does.
  const skew = Math.round((d.clock.now() - systemClock.now()) / 1000);
  return { as, client: { client_id: p.clientId, ...(skew !== 0 ? { [oauth.clockSkew]: skew } : {}) }, auth: oauth.ClientSecretPost(p.clientSecret), options };
}

export interface SsoStarted {
  url: URL;
  /** The browser's binding: set as a cookie; only its hash is stored with the flow. */
  binding: string;
  workspaceId: string;
  redirectUri: string;
}

/**
 * Begins a sign-in for the workspace named, or the one whose client app host `host` is (the
 * request's Host: the branded sign-in page's workspace), or the one whose provider admits the
 * address's domain.
 */
export async function startSsoSignIn(d: SsoDeps, who: { workspaceId?: string | undefined; email?: string | undefined }, host?: string): Promise<SsoStarted> {
  const domain = who.email ? emailDomain(who.email) : '';
  const workspaceId = who.workspaceId ?? (await workspaceOfAppHost(d.db, host)) ?? (domain ? await workspaceForDomain(d.db, domain) : undefined);
  if (!workspaceId) {
    throw cadenzaError('NOT_FOUND', domain ? `no workspace here signs in with single sign-on for ${domain}; sign in with your password` : 'name a workspace or give your work address');
  }
  const back = chooseCallback(d.callback, await hostRow(d.db, host), workspaceId);
  if (!back.ok) throw cadenzaError('FORBIDDEN', back.message, { reason: back.reason });
  const redirectUri = back.redirectUri;
  const provider = await ssoProvider(d.db, d.sealer, workspaceId);
  if (!provider) throw cadenzaError('NOT_FOUND', 'this workspace has no single sign-on set up; sign in with your password');
  const c = await clientOf(d, provider);
  if (!c.as.authorization_endpoint) throw cadenzaError('UNAUTHENTICATED', 'the identity provider names no authorization endpoint in its discovery document');
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const verifier = oauth.generateRandomCodeVerifier();
  const binding = oauth.generateRandomState();
  const now = d.clock.now();
  await purgeFlows(d.db, now);
  await saveFlow(d.db, {
    state,
    workspace_id: workspaceId,
    provider: 'sso',
    mode: 'sso',
    redirect_uri: redirectUri,
    code_verifier: verifier,
    nonce,
    login_hint: who.email ?? null,
    user_id: null,
    session_hash: secretHash(binding),
    created_at: new Date(now),
    expires_at: new Date(now + FLOW_TTL_MS),
  });
  const url = new URL(c.as.authorization_endpoint);
  const q = url.searchParams;
  q.set('client_id', provider.clientId);
  q.set('redirect_uri', redirectUri);
  q.set('response_type', 'code');
  q.set('scope', 'openid email profile');
  q.set('state', state);
  q.set('nonce', nonce);
  q.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  q.set('code_challenge_method', 'S256');
  if (who.email) q.set('login_hint', who.email);
  return { url, binding, workspaceId, redirectUri };
}

export interface SsoSignedIn {
  accountId: string;
  workspaceId: string;
  email: string;
  /** A membership was made by this sign-in (just in time). */
  joined: boolean;
  role: string;
}

/** Where a browser at the callback on `host` is sent afterwards (the app or the SSO form): that host when it is a serving client app host, else the public URL. */
export async function ssoLandingBase(d: Pick<SsoDeps, 'db' | 'callback'>, host: string | undefined): Promise<string> {
  return landingBase(d.callback, await hostRow(d.db, host));
}

/**
 * Completes a sign-in from the callback's query, in the browser that started it (`binding`: its
 * cookie), on the host it started on (`host`: the callback request's; its base must be the one the
 * flow's redirect URI names, whatever the Host header says).
 */
export async function completeSsoSignIn(d: SsoDeps, callback: URLSearchParams, binding: string | undefined, ip: string, host?: string): Promise<SsoSignedIn> {
  const state = callback.get('state');
  if (!state) throw cadenzaError('INVALID_INPUT', 'the sign-in came back without its state; start again from the sign-in page');
  const consumed = await consumeFlow(d.db, state, d.clock.now(), binding ? secretHash(binding) : undefined, ['sso']);
  if (!consumed.ok) {
    const why = {
      unknown: 'this sign-in is unknown to Cadenza; start again from the sign-in page',
      used: 'this sign-in link was already used; start again from the sign-in page',
      expired: 'this sign-in took more than 10 minutes and expired; start again',
      other_session: 'this sign-in was started in another browser; start again from this one',
    }[consumed.reason];
    throw cadenzaError('UNAUTHENTICATED', why, { reason: consumed.reason });
  }
  const flow = consumed.flow;
  // The binding cookie is host-only, so a callback on another host has none; said in words all the same.
  if (flow.redirect_uri !== `${await ssoLandingBase(d, host)}${SSO_CALLBACK_PATH}`) {
    throw cadenzaError('UNAUTHENTICATED', 'this sign-in was started on another address; start again from the sign-in page you use', { reason: 'other_host' });
  }
  const provider = await ssoProvider(d.db, d.sealer, flow.workspace_id);
  if (!provider) throw cadenzaError('UNAUTHENTICATED', 'single sign-on was turned off for this workspace while you signed in');
  const c = await clientOf(d, provider);
  const audit = (ok: boolean, label: string, detail: Record<string, unknown>) =>
    recordAudit(d.db, d, {
      workspaceId: flow.workspace_id,
      action: ok ? 'signin.succeeded' : 'signin.failed',
      actor: { kind: 'anonymous', label: label.slice(0, 320), ip },
      target: label.slice(0, 320),
      detail: { sso: true, ...detail },
    });
  const refuse = async (code: 'UNAUTHENTICATED' | 'FORBIDDEN', message: string, label: string, reason: string): Promise<never> => {
    await audit(false, label, { reason });
    throw cadenzaError(code, message, { reason });
  };

  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(c.as, c.client, callback, state);
  } catch (e) {
    if (e instanceof oauth.AuthorizationResponseError) return refuse('UNAUTHENTICATED', `the identity provider did not sign you in (${e.error}${e.error_description ? `: ${e.error_description}` : ''})`, 'sso', e.error);
    return refuse('UNAUTHENTICATED', `the identity provider's answer was not valid (${(e as Error).message})`, 'sso', 'callback');
  }
  let claims: oauth.IDToken;
  const o = c.options();
  try {
    const res = await oauth.authorizationCodeGrantRequest(c.as, c.client, c.auth, params, flow.redirect_uri, flow.code_verifier, o);
    const tokens = await oauth.processAuthorizationCodeResponse(c.as, c.client, res, { expectedNonce: flow.nonce ?? oauth.expectNoNonce, requireIdToken: true });
    // processAuthorizationCodeResponse checks iss, aud, exp, iat and nonce; the signature of an ID
    // token from the token endpoint is checked here, against the provider's JWKS (RS256).
    await oauth.validateApplicationLevelSignature(c.as, res, o);
    claims = oauth.getValidatedIdTokenClaims(tokens)!;
  } catch (e) {
    if (e instanceof oauth.ResponseBodyError) return refuse('UNAUTHENTICATED', `the identity provider refused the sign-in code (${e.error})`, 'sso', e.error);
    return refuse('UNAUTHENTICATED', `the identity provider's ID token failed its checks (${(e as Error).message}); nobody was signed in`, 'sso', 'id_token');
  } finally {
    o.cancel();
  }

  const email = typeof claims.email === 'string' ? normalizeAccountEmail(claims.email) : '';
  if (!email || !email.includes('@')) return refuse('FORBIDDEN', 'the identity provider did not give your email address; ask your admin to release the email claim to Cadenza', `sub:${claims.sub}`, 'no_email');
  // OpenID Connect Core §5.7: only a verified address identifies a person.
  if (claims.email_verified !== true) return refuse('FORBIDDEN', `the identity provider has not verified ${email}; verify it there first, then sign in again`, email, 'unverified');
  const domain = emailDomain(email);
  const groupsRaw = (claims as Record<string, unknown>)[provider.groupsClaim];
  const groups = Array.isArray(groupsRaw) ? groupsRaw.filter((g): g is string => typeof g === 'string') : typeof groupsRaw === 'string' ? [groupsRaw] : [];
  const name = typeof claims.name === 'string' ? claims.name.slice(0, 200) : null;

  const result = await d.db.transaction().execute(async (tx) => {
    const account = await tx.selectFrom('account').select(['id']).where(sql<string>`lower(email)`, '=', email).forUpdate().executeTakeFirst();
    if (account) {
      // A workspace's provider vouches only inside that workspace. An existing account signs in
      // through it only when it is already a member here (granted before, by an invitation or an
      // earlier sign-in), never by a membership made now: the provider must not claim an
      // outsider's account (whoever holds it accepts an invitation instead). A member who also
      // belongs to other workspaces gets a session that opens those too, so for them the provider
      // must speak for a domain this workspace has proven (domain-proof.ts): whoever controls the
      // domain's DNS controls its mail and could reset the password anyway; an admin who merely
      // typed a provider could otherwise reach the member's other workspaces.
      const memberships = await tx.selectFrom('app_user').select(['workspace_id', 'role']).where('account_id', '=', account.id).execute();
      const here = memberships.find((m) => m.workspace_id === flow.workspace_id);
      if (!here) return { ok: false as const, reason: 'existing_account' as const };
      if (memberships.length > 1 && !(provider.allowedDomains.includes(domain) && (await isDomainVerified(tx, flow.workspace_id, domain)))) return { ok: false as const, reason: 'member_elsewhere_unproven' as const };
      return { ok: true as const, accountId: account.id, joined: false, role: here.role };
    }
    // Only an address of an admitted domain joins: the workspace's provider vouches for its own people.
    if (!provider.allowedDomains.includes(domain)) return { ok: false as const, reason: 'domain_not_allowed' as const };
    // ... and only once the workspace has proven it owns that domain (its DNS): a listed domain alone signs in nobody new.
    if (!(await isDomainVerified(tx, flow.workspace_id, domain))) return { ok: false as const, reason: 'domain_unverified' as const };
    const role = mappedRole(provider, groups);
    const deps = { clock: d.clock, random: d.random };
    const accountId = newId(d.clock.now(), d.random);
    // No password: '!' matches no argon2 hash (passwords.ts), so only SSO (or a reset) opens it.
    await tx.insertInto('account').values({ id: accountId, email, name, password_hash: '!' }).execute();
    const userId = await addMembership(tx, deps, { accountId, workspaceId: flow.workspace_id, email, name, role });
    await recordAudit(tx, deps, { workspaceId: flow.workspace_id, action: 'member.added', actor: { kind: 'system', label: 'single sign-on' }, target: email, detail: { role, userId, sso: true, groups: groups.slice(0, 20) } });
    return { ok: true as const, accountId, joined: true, role };
  });
  if (!result.ok && result.reason === 'existing_account') {
    const ws = await d.db.selectFrom('workspace').select('name').where('id', '=', flow.workspace_id).executeTakeFirst();
    return refuse('FORBIDDEN', `An account with this email already exists and belongs to other workspaces; sign in with your password (an admin of ${ws?.name ?? 'this workspace'} can invite it)`, email, 'existing_account');
  }
  if (!result.ok && result.reason === 'member_elsewhere_unproven') {
    return refuse('FORBIDDEN', `Your account also belongs to other workspaces; single sign-on opens it only for an email domain this workspace has verified, and ${domain} is not one. Sign in with your password`, email, result.reason);
  }
  if (!result.ok && result.reason === 'domain_unverified') {
    return refuse('FORBIDDEN', `${domain} is not verified for single sign-on in this workspace yet, so nobody new joins by it; ask an admin to verify the domain, or to invite you`, email, result.reason);
  }
  if (!result.ok) return refuse('FORBIDDEN', `${domain} addresses may not join this workspace by single sign-on; ask an admin to invite you, or to add the domain`, email, 'domain_not_allowed');
  await audit(true, email, { joined: result.joined, role: result.role });
  return { accountId: result.accountId, workspaceId: flow.workspace_id, email, joined: result.joined, role: result.role };
}
