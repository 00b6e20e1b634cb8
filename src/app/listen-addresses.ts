import type { NetworkInterfaceInfo } from 'node:os';

export interface BoundAddress {
  address: string;
  family: string | number;
  port: number;
}

export interface Listening {
  /** Each address:port the server is bound to, as the socket has it (`0.0.0.0:8080`, `[::1]:8080`). */
  bound: string[];
  /** True when a wildcard address takes connections on every interface of the machine. */
  everyInterface: boolean;
  /** A URL per address that reaches it: the loopback ones first, then each interface's. */
  urls: string[];
}

const isV6 = (family: string | number) => family === 'IPv6' || family === 6;
const hostPart = (address: string, family: string | number) => (isV6(family) ? `[${address}]` : address);

/**
 * Where a server really listens, from the addresses its sockets are bound to and the machine's
 * interfaces: a wildcard (0.0.0.0, ::) means every address of every interface of its family (`::`
 * also takes IPv4 on a dual-stack system), so each of them is a URL others can use. Pure: the
 * caller passes `server.addresses()` and `os.networkInterfaces()`.
 */
export function describeListening(bound: readonly BoundAddress[], interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>): Listening {
  const urls: string[] = [];
  const add = (address: string, family: string | number, port: number) => {
    const url = `http://${hostPart(address, family)}:${port}`;
    if (!urls.includes(url)) urls.push(url);
  };
  let everyInterface = false;
  for (const b of bound) {
    const wildcard = b.address === '0.0.0.0' || b.address === '::';
    if (!wildcard) {
      add(b.address, b.family, b.port);
      continue;
    }
    everyInterface = true;
    const all = Object.values(interfaces).flatMap((list) => list ?? []);
    const ofFamily = all.filter((i) => (b.address === '::' ? true : !isV6(i.family)) && !i.address.startsWith('fe80:'));
    // Loopback first: the URL that works from this machine whatever its network.
    for (const i of [...ofFamily.filter((x) => x.internal), ...ofFamily.filter((x) => !x.internal)]) add(i.address, i.family, b.port);
  }
  return { bound: bound.map((b) => `${hostPart(b.address, b.family)}:${b.port}`), everyInterface, urls };
}
