import type { CertInfo } from './certificates.ts';

/**
 * What `cadenza ca rotate` reissues, decided from the certificates alone (no files, no clock
 * reading of its own): every certificate that expires within `withinDays`, or, when the CA itself
 * is replaced, every certificate (the old CA stays in the trust file until `cadenza ca retire`, so
 * a process still holding a certificate of the old CA keeps connecting meanwhile).
 */
export interface NamedCert {
  name: string;
  info: CertInfo;
}

export interface RotationPlan {
  reissue: Array<{ name: string; reason: string }>;
  keep: string[];
}

const DAY_MS = 86_400_000;

export function rotationPlan(certs: NamedCert[], nowMs: number, o: { withinDays: number; newCa: boolean }): RotationPlan {
  const plan: RotationPlan = { reissue: [], keep: [] };
  for (const c of certs) {
    const left = daysLeft(c.info, nowMs);
    if (o.newCa) plan.reissue.push({ name: c.name, reason: 'the CA is replaced' });
    else if (left <= o.withinDays) plan.reissue.push({ name: c.name, reason: left < 0 ? `expired ${-left} day(s) ago` : `expires in ${left} day(s)` });
    else plan.keep.push(c.name);
  }
  return plan;
}

/** Whole days until notAfter (negative once expired). */
export function daysLeft(info: CertInfo, nowMs: number): number {
  return Math.floor((info.notAfter.getTime() - nowMs) / DAY_MS);
}

/** A reissued certificate lasts as long as the one it replaces, in whole days (at least one). */
export function lifetimeDays(info: CertInfo): number {
  return Math.max(1, Math.round((info.notAfter.getTime() - info.notBefore.getTime()) / DAY_MS));
}

/** The CAs a trust file lists: the current one first, then retired ones that have not expired. */
export function trustedCas<T extends { info: CertInfo }>(current: T, retired: T[], nowMs: number): T[] {
  return [current, ...retired.filter((r) => r.info.notAfter.getTime() > nowMs)];
}
