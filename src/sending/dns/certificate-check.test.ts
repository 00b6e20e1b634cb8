import { describe, expect, it } from 'vitest';
import { certificateCheck, EXPIRY_WARNING_MS } from './certificate-check.ts';
import { verdictOf } from './domain-health.ts';

/** A custom tracking host's certificate judged at an instant: each state of the ACME job, and expiry. */
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 1, 12);
const HOST = 'track.acme.test';

describe('certificateCheck', () => {
  it('an issued certificate far from its end is ok, and says until when', () => {
    const c = certificateCheck(HOST, { state: 'active', reason: null, notAfter: NOW + 60 * DAY }, NOW);
    expect(c).toEqual({ kind: 'certificate', name: HOST, status: 'ok', published: ['valid until 2026-07-31'], differences: [] });
  });

  it('no certificate yet, or failed, or ended: missing, with the reason in words', () => {
    expect(certificateCheck(HOST, { state: 'pending_dns', reason: null, notAfter: null }, NOW)).toMatchObject({ status: 'missing', differences: [expect.stringContaining('once the CNAME of track.acme.test points here'), expect.stringContaining('public address')] });
    expect(certificateCheck(HOST, { state: 'issuing', reason: null, notAfter: null }, NOW).differences[0]).toBe('no certificate yet: it is being obtained');
    const refused = 'the certificate authority did not issue a certificate for track.acme.test: rate limited';
    expect(certificateCheck(HOST, { state: 'failed', reason: refused, notAfter: NOW - DAY }, NOW)).toMatchObject({ status: 'missing', differences: [refused, expect.any(String)] });
    // Past its end but the job has not looked yet: still not served in links.
    expect(certificateCheck(HOST, { state: 'active', reason: null, notAfter: NOW }, NOW)).toMatchObject({ status: 'missing', differences: ['the certificate ended on 2026-06-01', expect.any(String)] });
  });

  it('a failing renewal is broken while the certificate still serves; so is an end near without a renewal', () => {
    const failing = certificateCheck(HOST, { state: 'renewing', reason: 'track.acme.test is a CNAME to elsewhere.test, not to app.cadenza.test', notAfter: NOW + 25 * DAY }, NOW);
    expect(failing).toMatchObject({ status: 'differs', published: ['valid until 2026-06-26'] });
    expect(failing.differences).toEqual(['renewal is failing: track.acme.test is a CNAME to elsewhere.test, not to app.cadenza.test', 'links keep using track.acme.test until then']);
    expect(verdictOf([failing])).toBe('broken');

    const soon = certificateCheck(HOST, { state: 'active', reason: null, notAfter: NOW + EXPIRY_WARNING_MS }, NOW);
    expect(soon).toMatchObject({ status: 'differs', differences: ['the certificate ends in 14 day(s), on 2026-06-15, and has not been renewed', expect.any(String)] });
    expect(certificateCheck(HOST, { state: 'active', reason: null, notAfter: NOW + EXPIRY_WARNING_MS + 1 }, NOW).status).toBe('ok');
    expect(certificateCheck(HOST, { state: 'renewing', reason: null, notAfter: NOW + 3_600_000 }, NOW).differences[0]).toMatch(/ends in 1 day\(s\)/);
  });
});
