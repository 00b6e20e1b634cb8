import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config.ts';
import { trackingDomainSettingsFrom } from './settings.ts';

describe('custom tracking host settings from the configuration', () => {
  it('are off unless the HTTPS port is set', () => {
    expect(trackingDomainSettingsFrom(loadConfig({ CADENZA_PUBLIC_URL: 'https://cadenza.example.com' }))).toBeUndefined();
  });

  it("take the public host from CADENZA_PUBLIC_HOST, else the public URL's host, and refuse to run without either", () => {
    const fromUrl = trackingDomainSettingsFrom(loadConfig({ CADENZA_TRACKING_HTTPS_PORT: '443', CADENZA_PUBLIC_URL: 'https://Cadenza.Example.com/app' }))!;
    expect(fromUrl).toMatchObject({ httpsPort: 443, httpsHost: '127.0.0.1', publicHost: 'cadenza.example.com', acme: { directoryUrl: 'https://acme-v02.api.letsencrypt.org/directory' } });
    const explicit = trackingDomainSettingsFrom(loadConfig({ CADENZA_TRACKING_HTTPS_PORT: '8443', CADENZA_PUBLIC_HOST: 'track.cadenza.example.com', CADENZA_DNS_RESOLVER: '10.0.0.53' }))!;
    expect(explicit).toMatchObject({ publicHost: 'track.cadenza.example.com', dnsServers: ['10.0.0.53'] });
    expect(() => trackingDomainSettingsFrom(loadConfig({ CADENZA_TRACKING_HTTPS_PORT: '443' }))).toThrow(/CADENZA_PUBLIC_HOST/);
  });

  it('read the directory CA from its file, and say which file cannot be read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-acme-ca-'));
    try {
      writeFileSync(join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\n');
      const env = { CADENZA_TRACKING_HTTPS_PORT: '443', CADENZA_PUBLIC_HOST: 'c.example.com', CADENZA_ACME_CA_FILE: join(dir, 'ca.pem') };
      expect(trackingDomainSettingsFrom(loadConfig(env))!.acme.directoryCa).toContain('BEGIN CERTIFICATE');
      expect(() => trackingDomainSettingsFrom(loadConfig({ ...env, CADENZA_ACME_CA_FILE: join(dir, 'missing.pem') }))).toThrow(/missing\.pem cannot be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
