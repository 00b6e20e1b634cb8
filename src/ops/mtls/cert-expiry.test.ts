import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCa, issueLeaf, validFor } from './certificates.ts';
import { clientCertExpiry } from './cert-expiry.ts';

describe("a role's client certificate expiring", () => {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-expiry-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const DAY = 86_400_000;

  it('is said at start within 14 days of its end, and after it; not before, nor without a certificate', async () => {
    const now = Date.now();
    const ca = await createCa('CA', validFor(now, 100));
    const file = join(dir, 'cadenza_sender.crt');
    writeFileSync(file, (await issueLeaf(ca, { kind: 'client', commonName: 'cadenza_sender', validity: validFor(now, 30) })).certPem);
    const url = `postgres://cadenza_sender@db/cadenza?sslmode=verify-full&sslcert=${encodeURIComponent(file)}&sslkey=k`;
    expect(clientCertExpiry(url, now)).toBeUndefined();
    expect(clientCertExpiry(url, now + 20 * DAY)).toMatch(/CN cadenza_sender\) expires on .*, in 9 day\(s\): reissue it with `cadenza ca rotate`/);
    expect(clientCertExpiry(url, now + 31 * DAY)).toMatch(/expired on .*: PostgreSQL refuses it/);
    expect(clientCertExpiry('postgres://u@db/c', now)).toBeUndefined();
    expect(clientCertExpiry(undefined, now)).toBeUndefined();
  });
});
