import { DateTime } from 'luxon';
import { cadenzaError } from '../../common/errors.ts';

/**
 * The instant an operator names for a restore (`cadenza restore --to`) and for the reconcile after
 * it (`cadenza reconcile-sent --since`): the same words must give the same instant to both.
 *
 *   "2026-12-03 07:41"            a wall time in `zone` (default: this machine's zone, as `date` shows)
 *   "2026-12-03 07:41:30"         seconds allowed
 *   "2026-12-03T07:41:00Z"        ISO 8601 with Z or an offset: that instant, whatever the zone
 *
 * A wall time that does not exist in the zone (the hour skipped when the clocks go forward) is
 * refused rather than moved, and so is a time in the future: a restore can only go back.
 */
export function parseTargetTime(text: string, now: number, zone = 'system'): number {
  const t = text.trim();
  const withOffset = /(?:Z|[+-]\d\d(?::?\d\d)?)$/i.test(t) && /\d[T ]\d/.test(t);
  let dt: DateTime;
  if (withOffset) {
    dt = DateTime.fromISO(t.replace(' ', 'T'), { setZone: true });
  } else {
    const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/.exec(t);
    if (!m) throw cadenzaError('INVALID_INPUT', `'${text}' is not a time: write it as "YYYY-MM-DD HH:MM" (local time) or ISO 8601 with an offset`);
    const [, y, mo, d, h, mi, s, ms] = m;
    dt = DateTime.fromObject(
      { year: +y!, month: +mo!, day: +d!, hour: +h!, minute: +mi!, second: s ? +s : 0, millisecond: ms ? +ms.padEnd(3, '0') : 0 },
      { zone },
    );
    if (dt.isValid && (dt.hour !== +h! || dt.minute !== +mi!)) {
      throw cadenzaError('INVALID_INPUT', `${t} does not exist in ${dt.zoneName} (the clocks skip it); name a time before or after`);
    }
  }
  if (!dt.isValid) throw cadenzaError('INVALID_INPUT', `'${text}' is not a valid time (${dt.invalidExplanation ?? dt.invalidReason})`);
  const at = dt.toMillis();
  if (at > now) throw cadenzaError('INVALID_INPUT', `${new Date(at).toISOString()} is in the future: a restore can only go back in time`);
  return at;
}

/** The instant as pgBackRest's --target takes it: "YYYY-MM-DD HH:MM:SS.mmm+00" (UTC, PostgreSQL's timestamptz input). */
export function pgTargetText(at: number): string {
  return `${new Date(at).toISOString().replace('T', ' ').replace('Z', '')}+00`;
}
