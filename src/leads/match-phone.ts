/**
 * An incoming call to the lead it comes from: the caller's number read as an import reads a
 * lead's (phone.ts), then looked up by its E.164 form among the workspace's leads.
 *
 * Several leads can share a number (a switchboard, an assistant, one person entered twice): all
 * of them are answered, most recently updated first, the first being the best guess at who is
 * calling; the dialer shows the others beside it rather than choosing for the rep. At most
 * MAX_PHONE_MATCHES are read; `more` says when there were others past them.
 *
 * A number flagged 'not_valid' keeps its E.164 form on both sides (phone.ts), so a call from a
 * range the metadata does not know yet still finds its lead; a caller's number with no E.164 form
 * at all (withheld, 'anonymous', too short) matches nobody, and the verdict says why.
 */
import type { Db } from '../store/store.ts';
import { normalizePhone, type PhoneVerdict } from './phone.ts';
import { leadsByPhone } from './sql/leads-by-phone.ts';

/** More leads than this on one number is a switchboard: the rep needs the first few, not a list. */
export const MAX_PHONE_MATCHES = 20;

export interface PhoneMatch {
  /** The caller's number as read: its E.164 form (null when it has none), country, verdict. */
  caller: PhoneVerdict;
  /** The workspace's leads with that number, most recently updated first. */
  leads: Awaited<ReturnType<typeof leadsByPhone>>;
  /** True when more leads than MAX_PHONE_MATCHES share the number. */
  more: boolean;
}

/**
 * `rawNumber` as the telephony side gives it (E.164 from most SIP trunks, sometimes national);
 * `defaultCountry` reads a national one (the workspace's country, or the trunk's).
 */
export async function matchLeadByPhone(db: Db, workspaceId: string, rawNumber: string, defaultCountry: string | null): Promise<PhoneMatch> {
  const caller = normalizePhone(rawNumber, defaultCountry);
  if (caller.e164 === null) return { caller, leads: [], more: false };
  const found = await leadsByPhone(db, workspaceId, caller.e164, MAX_PHONE_MATCHES + 1);
  return { caller, leads: found.slice(0, MAX_PHONE_MATCHES), more: found.length > MAX_PHONE_MATCHES };
}
