/**
 * What a Salesforce connection stores (sealed, as every CRM token is): one JSON string
 *
 *   {"refreshToken": "5Aep861…", "clientId": "3MVG9…", "clientSecret": "…", "instanceUrl"?: "https://acme.my.salesforce.com"}
 *
 * — the refresh token an admin's consent to Cadenza's connected app gave, and the connected app's
 * consumer key and secret (each org registers its own app: Salesforce has no app shared across
 * orgs without a managed package). instanceUrl, when given, is where the token endpoint is asked;
 * otherwise the connection's base URL (the org's My Domain URL) is. Parsed once per connector; a
 * string that is not this JSON is refused with what is wrong, never echoed (it holds secrets).
 */
export interface SalesforceCredentials {
  refreshToken: string;
  clientId: string;
  clientSecret: string;
  instanceUrl?: string;
}

export function parseCredentials(sealed: string): SalesforceCredentials {
  let v: unknown;
  try {
    v = JSON.parse(sealed);
  } catch {
    throw new Error('Salesforce: the connection token is not JSON; it must be {"refreshToken","clientId","clientSecret","instanceUrl"?}');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('Salesforce: the connection token must be a JSON object {"refreshToken","clientId","clientSecret","instanceUrl"?}');
  const o = v as Record<string, unknown>;
  const missing = ['refreshToken', 'clientId', 'clientSecret'].filter((k) => typeof o[k] !== 'string' || o[k] === '');
  if (missing.length) throw new Error(`Salesforce: the connection token lacks ${missing.join(', ')}`);
  if (o.instanceUrl !== undefined && (typeof o.instanceUrl !== 'string' || !/^https?:\/\//.test(o.instanceUrl))) {
    throw new Error('Salesforce: instanceUrl in the connection token must be an http(s) URL');
  }
  return { refreshToken: o.refreshToken as string, clientId: o.clientId as string, clientSecret: o.clientSecret as string, ...(o.instanceUrl ? { instanceUrl: o.instanceUrl as string } : {}) };
}
