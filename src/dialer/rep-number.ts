import { normalizePhone } from '../leads/phone.ts';

/**
 * A rep's number on the carrier's SIP trunk (docs/dialer.md "Numbers"): the caller ID of the calls
 * they place and the DID whose incoming calls ring their browser. The carrier assigned it, so it is
 * written in full international form ('+' and the calling code: there is no country to read a
 * national number in) and must be a valid number of its country; it is stored as E.164.
 *
 * Pure: the API's members route validates with it, the credential carries what it returns.
 */
export type RepNumberVerdict = { ok: true; e164: string } | { ok: false; reason: string };

export function repNumber(raw: string): RepNumberVerdict {
  const text = raw.trim();
  if (!text.startsWith('+')) return { ok: false, reason: "write the number in international form, starting with '+' and the country calling code (e.g. +44 20 7946 0123)" };
  const v = normalizePhone(text, null);
  if (v.status !== 'valid' || !v.e164) return { ok: false, reason: v.reason ?? 'not a valid phone number' };
  if (v.extension) return { ok: false, reason: 'a number on the trunk has no extension: give the number the carrier assigned, without "ext."' };
  return { ok: true, e164: v.e164 };
}
