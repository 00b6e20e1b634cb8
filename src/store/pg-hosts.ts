import { cadenzaError } from '../common/errors.ts';

/**
 * A PostgreSQL URL naming several hosts, as libpq reads it:
 *   postgres://user:pass@host1:5432,host2:5433/db?target_session_attrs=read-write
 * node-postgres does not: its URL parser (pg-connection-string) takes one host and refuses the
 * list ("Invalid URL"), and it has no target_session_attrs. So the list is split here into one
 * single-host URL per host, tried in order by pg-failover.ts.
 *
 * target_session_attrs (libpq 34.1.2): 'any' takes the first host that answers; 'read-write'
 * (and its synonym 'primary') only a host that accepts writes. Absent: 'read-write' when several
 * hosts are named (the only reason to name a standby is to fail over to it; Cadenza writes on
 * every path, so a read-only session would only fail later, and worse), 'any' for a single host.
 * The other libpq values (read-only, standby, prefer-standby) are refused: Cadenza needs writes.
 */
export interface PgHosts {
  /** One URL per host, in the order given, each without target_session_attrs. */
  urls: string[];
  /** 'host:port' per URL, for messages (never the password). */
  names: string[];
  readWrite: boolean;
}

// scheme, userinfo (up to the last '@' before the path), host list, the rest (path, query, fragment).
const URL_PARTS = /^(postgres(?:ql)?:\/\/)(?:([^/?#]*)@)?([^/?#]*)(.*)$/i;

export function parsePgHosts(url: string): PgHosts {
  const m = URL_PARTS.exec(url);
  if (!m) throw cadenzaError('CONFIG_INVALID', 'the database URL must start with postgres:// or postgresql://');
  const [, scheme, userinfo, hostList, rest] = m as unknown as [string, string, string | undefined, string, string];
  const { rest: restOut, attrs } = takeSessionAttrs(rest);
  const hosts = hostList === '' ? [''] : splitHosts(hostList);
  const readWrite = attrs === null ? hosts.length > 1 : attrs === 'read-write';
  const urls = hosts.map((h) => `${scheme}${userinfo !== undefined ? `${userinfo}@` : ''}${h}${restOut}`);
  const names = hosts.map((h) => (h === '' ? '(default host)' : h.includes(':') && !h.endsWith(']') ? h : `${h}:5432`));
  return { urls, names, readWrite };
}

/** Hosts split on commas; a bracketed IPv6 address ([::1]:5432) keeps its colons. */
function splitHosts(list: string): string[] {
  const hosts = list.split(',');
  for (const h of hosts) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+)(:\d{1,5})?$/.test(h)) {
      throw cadenzaError('CONFIG_INVALID', `the database URL names a host that cannot be read: '${h}' (hosts are host[:port], separated by commas)`);
    }
  }
  return hosts;
}

/** Removes target_session_attrs from the query string (pg would pass it on as a server setting). */
function takeSessionAttrs(rest: string): { rest: string; attrs: 'any' | 'read-write' | null } {
  const q = rest.indexOf('?');
  if (q < 0) return { rest, attrs: null };
  const hash = rest.indexOf('#', q);
  const query = rest.slice(q + 1, hash < 0 ? undefined : hash);
  let attrs: 'any' | 'read-write' | null = null;
  const kept: string[] = [];
  for (const pair of query.split('&')) {
    const [k, v = ''] = pair.split('=');
    if (k !== 'target_session_attrs') {
      if (pair !== '') kept.push(pair);
      continue;
    }
    const value = decodeURIComponent(v);
    if (value === 'any') attrs = 'any';
    else if (value === 'read-write' || value === 'primary') attrs = 'read-write';
    else throw cadenzaError('CONFIG_INVALID', `target_session_attrs=${value} is not supported: Cadenza writes, so only any, read-write or primary`);
  }
  return { rest: `${rest.slice(0, q)}${kept.length ? `?${kept.join('&')}` : ''}${hash < 0 ? '' : rest.slice(hash)}`, attrs };
}
