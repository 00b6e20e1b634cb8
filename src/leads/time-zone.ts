/**
 * A lead's IANA time zone, as luxon (and so Intl and the tz data Node ships) knows it — the same
 * test the calendar's isValidZone applies, so a zone the import keeps is one the engine will use.
 */
import { IANAZone } from 'luxon';

// Names only: Intl in newer runtimes also accepts offsets such as '+05:00', which are not IANA zones.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;
const known = new Map<string, string | null>();
/** Bounds the cache against a hostile file with a different string on every row. */
const MAX_CACHED = 10_000;

/**
 * The zone's name, or null when it is not a zone. A name that differs from the canonical one only
 * in case ('america/new_york') is written canonically; links ('US/Eastern', 'Asia/Calcutta') are
 * kept as written, since they are valid and the writer chose them.
 */
export function normalizeTimeZone(raw: string): string | null {
  const s = raw.trim();
  const hit = known.get(s);
  if (hit !== undefined) return hit;
  let zone: string | null = null;
  if (ZONE_NAME.test(s) && IANAZone.isValidZone(s)) {
    const canonical = new Intl.DateTimeFormat('en-US', { timeZone: s }).resolvedOptions().timeZone;
    zone = canonical.toLowerCase() === s.toLowerCase() ? canonical : s;
  }
  if (known.size >= MAX_CACHED) known.clear();
  known.set(s, zone);
  return zone;
}
