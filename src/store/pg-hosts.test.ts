import { describe, expect, it } from 'vitest';
import { parsePgHosts } from './pg-hosts.ts';

describe('parsePgHosts (a libpq multi-host URL, which node-postgres refuses)', () => {
  it('splits the host list into one URL per host, in order, keeping user, password, path and other parameters', () => {
    const h = parsePgHosts('postgres://app:s%40cret@db1:5546,db2:5547,[::1]:5548/cadenza?sslmode=disable&target_session_attrs=read-write&application_name=x');
    expect(h.urls).toEqual([
      'postgres://app:s%40cret@db1:5546/cadenza?sslmode=disable&application_name=x',
      'postgres://app:s%40cret@db2:5547/cadenza?sslmode=disable&application_name=x',
      'postgres://app:s%40cret@[::1]:5548/cadenza?sslmode=disable&application_name=x',
    ]);
    expect(h.names).toEqual(['db1:5546', 'db2:5547', '[::1]:5548']);
    expect(h.readWrite).toBe(true);
  });

  it('several hosts default to read-write; one host to any; primary is read-write; any is kept as asked', () => {
    expect(parsePgHosts('postgres://a,b/db').readWrite).toBe(true);
    expect(parsePgHosts('postgresql://u@h:5432/db')).toEqual({ urls: ['postgresql://u@h:5432/db'], names: ['h:5432'], readWrite: false });
    expect(parsePgHosts('postgres://h/db?target_session_attrs=primary').readWrite).toBe(true);
    expect(parsePgHosts('postgres://a,b/db?target_session_attrs=any')).toMatchObject({ urls: ['postgres://a/db', 'postgres://b/db'], readWrite: false });
    expect(parsePgHosts('postgres://h')).toMatchObject({ urls: ['postgres://h'], names: ['h:5432'] });
  });

  it('refuses what it cannot honour, in plain words', () => {
    expect(() => parsePgHosts('mysql://h/db')).toThrow(/postgres:\/\//);
    expect(() => parsePgHosts('postgres://a,,b/db')).toThrow(/host that cannot be read: ''/);
    expect(() => parsePgHosts('postgres://a:x,b/db')).toThrow(/host that cannot be read: 'a:x'/);
    expect(() => parsePgHosts('postgres://a,b/db?target_session_attrs=standby')).toThrow(/standby is not supported/);
  });
});
