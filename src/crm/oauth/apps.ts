import type { Config } from '../../common/config.ts';

/**
 * The CRMs Cadenza connects with OAuth 2 (authorization code), each as its documentation describes
 * its app's endpoints (docs/providers/hubspot.md, pipedrive.md, salesforce.md "OAuth"):
 *
 *   hubspot     consent at app.hubspot.com/oauth/authorize (scopes in the request), the code and
 *               refresh tokens at api.hubapi.com/oauth/v1/token with the app's id and secret in
 *               the form; access tokens live 30 minutes. No PKCE documented: state only.
 *   pipedrive   consent at oauth.pipedrive.com/oauth/authorize (scopes are the app's, set in its
 *               Marketplace listing, not asked), token at oauth.pipedrive.com/oauth/token with
 *               HTTP Basic client authentication; the answer names the company's API host
 *               (api_domain); access tokens live an hour; a refresh returns a new refresh token.
 *               No PKCE documented: state only.
 *   salesforce  consent and token at the login host's /services/oauth2/authorize and /token, PKCE
 *               S256 supported; the answer names the org's instance (instance_url) and gives a
 *               refresh token (scope refresh_token), no expires_in.
 *
 * One app per CRM per installation, from the CADENZA_<CRM>_CLIENT_ID / _CLIENT_SECRET settings; a
 * CRM without both is connected with a pasted token only.
 */
export type OAuthCrm = 'hubspot' | 'pipedrive' | 'salesforce';

export const OAUTH_CRMS: readonly OAuthCrm[] = ['hubspot', 'pipedrive', 'salesforce'];

export function isOAuthCrm(kind: string): kind is OAuthCrm {
  return (OAUTH_CRMS as readonly string[]).includes(kind);
}

export interface CrmOAuthApp {
  kind: OAuthCrm;
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** How the token endpoint takes the app's id and secret: in the form (post) or as HTTP Basic. */
  clientAuth: 'post' | 'basic';
  pkce: boolean;
  /** Asked in the consent request; empty: the app's own (Pipedrive). */
  scopes: readonly string[];
}

/**
 * HubSpot's scopes for what the connector does (src/crm/hubspot/): contacts read and write (the
 * engagements and Cadenza's fields), the custom property it creates, deals, lists and owners read;
 * `oauth` is required of every HubSpot app.
 */
export const HUBSPOT_SCOPES = ['oauth', 'crm.objects.contacts.read', 'crm.objects.contacts.write', 'crm.schemas.contacts.write', 'crm.objects.deals.read', 'crm.lists.read', 'crm.objects.owners.read'] as const;

export type CrmOAuthApps = Partial<Record<OAuthCrm, CrmOAuthApp>>;

const trim = (u: string) => u.replace(/\/+$/, '');

export function crmOAuthAppsFrom(c: Partial<Config>): CrmOAuthApps {
  const apps: CrmOAuthApps = {};
  if (c.CADENZA_HUBSPOT_CLIENT_ID && c.CADENZA_HUBSPOT_CLIENT_SECRET) {
    const o = c.CADENZA_HUBSPOT_OAUTH_URL ? trim(c.CADENZA_HUBSPOT_OAUTH_URL) : undefined;
    apps.hubspot = {
      kind: 'hubspot',
      clientId: c.CADENZA_HUBSPOT_CLIENT_ID,
      clientSecret: c.CADENZA_HUBSPOT_CLIENT_SECRET,
      authorizeUrl: `${o ?? 'https://app.hubspot.com'}/oauth/authorize`,
      tokenUrl: `${o ?? 'https://api.hubapi.com'}/oauth/v1/token`,
      clientAuth: 'post',
      pkce: false,
      scopes: HUBSPOT_SCOPES,
    };
  }
  if (c.CADENZA_PIPEDRIVE_CLIENT_ID && c.CADENZA_PIPEDRIVE_CLIENT_SECRET) {
    const o = trim(c.CADENZA_PIPEDRIVE_OAUTH_URL ?? 'https://oauth.pipedrive.com');
    apps.pipedrive = { kind: 'pipedrive', clientId: c.CADENZA_PIPEDRIVE_CLIENT_ID, clientSecret: c.CADENZA_PIPEDRIVE_CLIENT_SECRET, authorizeUrl: `${o}/oauth/authorize`, tokenUrl: `${o}/oauth/token`, clientAuth: 'basic', pkce: false, scopes: [] };
  }
  if (c.CADENZA_SALESFORCE_CLIENT_ID && c.CADENZA_SALESFORCE_CLIENT_SECRET) {
    const o = trim(c.CADENZA_SALESFORCE_LOGIN_URL ?? 'https://login.salesforce.com');
    apps.salesforce = {
      kind: 'salesforce',
      clientId: c.CADENZA_SALESFORCE_CLIENT_ID,
      clientSecret: c.CADENZA_SALESFORCE_CLIENT_SECRET,
      authorizeUrl: `${o}/services/oauth2/authorize`,
      tokenUrl: `${o}/services/oauth2/token`,
      clientAuth: 'post',
      pkce: true,
      scopes: ['api', 'refresh_token'],
    };
  }
  return apps;
}
