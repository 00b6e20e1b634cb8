import type { Clock } from '../common/clock.ts';
import type { CrmConnector, CrmKind } from './connector.ts';
import { HubSpotConnector } from './hubspot/connector.ts';
import { parseOAuthCredential, RefreshingToken } from './oauth/credential.ts';
import { PipedriveConnector } from './pipedrive/connector.ts';
import { SalesforceConnector } from './salesforce/connector.ts';
import { TwentyConnector } from './twenty/connector.ts';

/** What a connector is made from: the connection's API address and its opened token. */
export interface ConnectorInput {
  baseUrl: string;
  token: string;
  /** Paces the connector's own waits (the system clock in production, a SimClock in tests). */
  clock?: Clock;
  /** Stores a refreshed OAuth credential (sealed again; connections.ts saveCredential); absent: kept in memory only. */
  saveToken?: (token: string) => Promise<void>;
}

/**
 * The token of a HubSpot or Pipedrive connection: a pasted one as it is, an OAuth one
 * (oauth/credential.ts) refreshed before it expires, its refreshes stored through saveToken.
 */
function tokenOf(i: ConnectorInput): { token: () => string | Promise<string>; oauth: boolean } {
  const cred = parseOAuthCredential(i.token);
  if (!cred) return { token: () => i.token, oauth: false };
  const t = new RefreshingToken(cred, { ...(i.clock ? { clock: i.clock } : {}), ...(i.saveToken ? { save: i.saveToken } : {}) });
  return { token: () => t.get(), oauth: true };
}

/**
 * The CRMs this version can connect, each with its connector (src/crm/<kind>/). A kind missing
 * here is refused when an admin tries to connect it, with the list of those available.
 */
const FACTORIES: Partial<Record<CrmKind, (i: ConnectorInput) => CrmConnector>> = {
  hubspot: (i) => new HubSpotConnector({ baseUrl: i.baseUrl, token: tokenOf(i).token, ...(i.clock ? { clock: i.clock } : {}) }),
  pipedrive: (i) => {
    const t = tokenOf(i);
    // An OAuth access token goes as a bearer token, an API token in x-api-token (pipedrive/client.ts).
    return new PipedriveConnector({ baseUrl: i.baseUrl, token: t.token, ...(t.oauth ? { auth: 'oauth' as const } : {}), ...(i.clock ? { clock: i.clock } : {}) });
  },
  // The base URL is the org's My Domain URL (no default: the admin gives it); the token is the JSON of src/crm/salesforce/credentials.ts.
  salesforce: (i) => new SalesforceConnector({ baseUrl: i.baseUrl, token: i.token, ...(i.clock ? { clock: i.clock } : {}) }),
  twenty: (i) => new TwentyConnector({ baseUrl: i.baseUrl, apiKey: () => i.token, ...(i.clock ? { clock: i.clock } : {}) }),
};

export const connectorKinds: ReadonlySet<CrmKind> = new Set(Object.keys(FACTORIES) as CrmKind[]);

export function makeConnector(kind: CrmKind, input: ConnectorInput): CrmConnector {
  const make = FACTORIES[kind];
  if (!make) throw new Error(`no connector for ${kind} in this version`);
  return make(input);
}
