import { describe, expect, it } from 'vitest';
import type { CertInfo } from './certificates.ts';
import { daysLeft, lifetimeDays, rotationPlan, trustedCas } from './rotation.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 1);
const cert = (notBeforeDays: number, notAfterDays: number): CertInfo => ({
  kind: 'client',
  commonName: 'cadenza_api',
  issuer: 'CA',
  serial: '01',
  notBefore: new Date(NOW + notBeforeDays * DAY),
  notAfter: new Date(NOW + notAfterDays * DAY),
  hosts: [],
});

describe('CA rotation plan', () => {
  it('reissues what expires within the window (or has expired), keeps the rest', () => {
    const plan = rotationPlan(
      [
        { name: 'soon', info: cert(-80, 10) },
        { name: 'gone', info: cert(-100, -2) },
        { name: 'later', info: cert(-10, 80) },
      ],
      NOW,
      { withinDays: 30, newCa: false },
    );
    expect(plan.reissue).toEqual([
      { name: 'soon', reason: 'expires in 10 day(s)' },
      { name: 'gone', reason: 'expired 2 day(s) ago' },
    ]);
    expect(plan.keep).toEqual(['later']);
  });

  it('reissues everything when the CA is replaced', () => {
    expect(rotationPlan([{ name: 'later', info: cert(-10, 80) }], NOW, { withinDays: 30, newCa: true }).reissue).toEqual([{ name: 'later', reason: 'the CA is replaced' }]);
  });

  it('a reissued certificate lasts as long as the one it replaces', () => {
    expect(lifetimeDays(cert(-80, 10))).toBe(90);
    expect(daysLeft(cert(-80, 10), NOW)).toBe(10);
  });

  it('trusts the current CA and the retired ones that have not expired', () => {
    const current = { id: 'new', info: cert(0, 3650) };
    expect(trustedCas(current, [{ id: 'old', info: cert(-3000, 600) }, { id: 'dead', info: cert(-4000, -1) }], NOW).map((c) => c.id)).toEqual(['new', 'old']);
  });
});
