import type { CrmConnector, CrmKind } from './connector.ts';

/** What a connector is made from: the connection's API address and its opened token. */
export interface ConnectorInput {
  baseUrl: string;
  token: string;
}

/**
 * The CRMs this version can connect, each with its connector (src/crm/<kind>/). A kind missing
 * here is refused when an admin tries to connect it, with the list of those available.
 */
const FACTORIES: Partial<Record<CrmKind, (i: ConnectorInput) => CrmConnector>> = {};

export const connectorKinds: ReadonlySet<CrmKind> = new Set(Object.keys(FACTORIES) as CrmKind[]);

export function makeConnector(kind: CrmKind, input: ConnectorInput): CrmConnector {
  const make = FACTORIES[kind];
  if (!make) throw new Error(`no connector for ${kind} in this version`);
  return make(input);
}
