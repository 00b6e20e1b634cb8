import { DateTime } from 'luxon';

/**
 * Whether now is a decent hour to ring the lead, in the lead's own zone: 08:00 to 21:00 local, the
 * hours the US telemarketing rule (TCPA, 47 CFR 64.1200(c)(1)) allows and a sane default anywhere.
 * Call tasks already come due inside the sequence's window; this guards the dial itself (a task
 * worked late, a lead dialled from the lead page). Pure: the caller gives the time.
 */
export const CALLING_HOURS = { from: 8, until: 21 } as const;

export interface CallingHoursVerdict {
  ok: boolean;
  /** The lead's local time, e.g. "22:40 in America/Chicago". */
  local: string;
}

export function callingHours(now: number, zone: string): CallingHoursVerdict {
  let t = DateTime.fromMillis(now, { zone });
  if (!t.isValid) t = DateTime.fromMillis(now, { zone: 'UTC' });
  const local = `${t.toFormat('HH:mm')} in ${t.zoneName}`;
  return { ok: t.hour >= CALLING_HOURS.from && t.hour < CALLING_HOURS.until, local };
}
