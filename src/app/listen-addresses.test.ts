import { describe, expect, it } from 'vitest';
import { describeListening } from './listen-addresses.ts';

const interfaces = {
  lo: [
    { address: '127.0.0.1', family: 'IPv4', internal: true, netmask: '255.0.0.0', mac: '00:00:00:00:00:00', cidr: '127.0.0.1/8' },
    { address: '::1', family: 'IPv6', internal: true, netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', mac: '00:00:00:00:00:00', cidr: '::1/128', scopeid: 0 },
  ],
  eth0: [
    { address: '192.168.1.20', family: 'IPv4', internal: false, netmask: '255.255.255.0', mac: '02:42:ac:11:00:02', cidr: '192.168.1.20/24' },
    { address: 'fe80::42:acff:fe11:2', family: 'IPv6', internal: false, netmask: 'ffff:ffff:ffff:ffff::', mac: '02:42:ac:11:00:02', cidr: 'fe80::42:acff:fe11:2/64', scopeid: 2 },
  ],
} as const;

// Issue 11: bound to every interface, the server logged only a loopback URL.
describe('where the server listens', () => {
  it('a wildcard IPv4 bind is every IPv4 interface: each gets a URL, loopback first', () => {
    expect(describeListening([{ address: '0.0.0.0', family: 'IPv4', port: 8080 }], interfaces as never)).toEqual({
      bound: ['0.0.0.0:8080'],
      everyInterface: true,
      urls: ['http://127.0.0.1:8080', 'http://192.168.1.20:8080'],
    });
  });

  it('a wildcard IPv6 bind takes both families; link-local addresses need a zone and are left out', () => {
    expect(describeListening([{ address: '::', family: 'IPv6', port: 80 }], interfaces as never).urls).toEqual(['http://127.0.0.1:80', 'http://[::1]:80', 'http://192.168.1.20:80']);
  });

  it('a loopback bind is that address alone', () => {
    expect(describeListening([{ address: '127.0.0.1', family: 'IPv4', port: 8080 }, { address: '::1', family: 'IPv6', port: 8080 }], interfaces as never)).toEqual({
      bound: ['127.0.0.1:8080', '[::1]:8080'],
      everyInterface: false,
      urls: ['http://127.0.0.1:8080', 'http://[::1]:8080'],
    });
  });
});
