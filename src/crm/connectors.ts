import type { Clock } from '../common/clock.ts';
import type { CrmConnector, CrmKind } from './connector.ts';
import { HubSpotConnector } from './hubspot/connector.ts';
import { PipedriveConnector } from './pipedrive/connector.ts';
import { SalesforceConnector } from './salesforce/connector.ts';
import { TwentyConnector } from './twenty/connector.ts';

/** What a connector is made from: the connection's API address and its opened token. */
export interface ConnectorInput {
  baseUrl: string;
  token: string;
  /** Paces the connector's own waits (the system clock in production, a SimClock in tests). */
  clock?: Clock;
}

/**
 * The CRMs this version can connect, each with its connector (src/crm/<kind>/). A kind missing
 * here is refused when an admin tries to connect it, with the list of those available.
 */
const FACTORIES: Partial<Record<CrmKind, (i: ConnectorInput) => CrmConnector>> = {
  hubspot: (i) => new HubSpotConnector({ baseUrl: i.baseUrl, token: () => i.token, ...(i.clock ? { clock: i.clock } : {}) }),
  pipedrive: (i) => new PipedriveConnector({ baseUrl: i.baseUrl, token: () => i.token, ...(i.clock ? { clock: i.clock } : {}) }),
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
