import { cadenzaError } from '../common/errors.ts';
import { normalizeCountry } from './country.ts';
import { checkEmail } from './email.ts';
import { normalizeTimeZone } from './time-zone.ts';

/** One lead's fields as a person or a script types them (the API), before normalisation. */
export interface LeadInput {
  email?: string | undefined;
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
  company?: string | null | undefined;
  title?: string | null | undefined;
  phone?: string | null | undefined;
  country?: string | null | undefined;
  timeZone?: string | null | undefined;
}

export interface LeadColumns {
  email?: string;
  email_norm?: string;
  first_name?: string | null;
  last_name?: string | null;
  company?: string | null;
  title?: string | null;
  phone?: string | null;
  country?: string | null;
  time_zone?: string | null;
}

/**
 * The lead table's columns for the given fields, normalised by the same rules as a CSV import
 * (address check and normalisation, country names and codes, zone names and aliases). A value the
 * rules cannot read is INVALID_INPUT naming the field; only the fields given are returned.
 */
export function leadColumns(input: LeadInput): LeadColumns {
  const out: LeadColumns = {};
  if (input.email !== undefined) {
    const c = checkEmail(input.email);
    if (!c.ok) throw cadenzaError('INVALID_INPUT', `email ${c.message}`, { field: 'email' });
    out.email = c.email;
    out.email_norm = c.norm;
  }
  const text = (v: string | null | undefined) => (v === undefined ? undefined : v === null || v.trim() === '' ? null : v.trim());
  const set = <K extends 'first_name' | 'last_name' | 'company' | 'title' | 'phone'>(k: K, v: string | null | undefined) => {
    const t = text(v);
    if (t !== undefined) out[k] = t;
  };
  set('first_name', input.firstName);
  set('last_name', input.lastName);
  set('company', input.company);
  set('title', input.title);
  set('phone', input.phone);
  const country = text(input.country);
  if (country !== undefined) {
    const c = country === null ? null : normalizeCountry(country);
    if (country !== null && c === null) throw cadenzaError('INVALID_INPUT', `country '${country}' is not a country name or ISO code`, { field: 'country' });
    out.country = c;
  }
  const zone = text(input.timeZone);
  if (zone !== undefined) {
    const z = zone === null ? null : normalizeTimeZone(zone);
    if (zone !== null && z === null) throw cadenzaError('INVALID_INPUT', `time zone '${zone}' is not known`, { field: 'timeZone' });
    out.time_zone = z;
  }
  return out;
}
