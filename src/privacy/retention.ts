import { cadenzaError } from '../common/errors.ts';

/**
 * A workspace's retention of personal data, in days (workspace.settings.retention): how long each
 * kind of data is kept before the nightly purge (purge.ts) removes it. Null keeps it until it is
 * deleted by hand or by erasure, the default, so an upgrade deletes nothing nobody asked for.
 * The audit log has its own retention (api/audit/retention.ts, auditRetentionDays).
 *
 * Each kind has a floor: below it the data Cadenza still works with would go (a reply to a message
 * whose row is gone is no longer threaded to its enrollment; a week of events feeds the analytics).
 */
export const RETENTION_KINDS = {
  messageBodiesDays: {
    min: 7,
    what: "Message text: a reply's new text, excerpt and HTML, and a quarantined message's raw bytes (the message's headers stay)",
  },
  messagesDays: {
    min: 30,
    what: 'Whole messages (headers, addresses, subject), quarantined messages and replies sent from the inbox',
  },
  eventsDays: {
    min: 30,
    what: "Events: the enrollments' journal, opens, clicks and unsubscribes, and webhook deliveries done",
  },
  importRejectsDays: {
    min: 1,
    what: "The rows an import rejected (kept for the import's reject report)",
  },
  // A week at least: a rep back from a few days off still finds who called while they were away.
  unmatchedCallsDays: {
    min: 7,
    what: "Calls with no lead (an incoming call from a number no lead has): the number, times and notes, with their recording and transcript; and the call captures that could not become a recording",
  },
} as const;
export type RetentionKind = keyof typeof RETENTION_KINDS;
export type Retention = Record<RetentionKind, number | null>;
export const MAX_RETENTION_DAYS = 3650;
export const KEEP_EVERYTHING: Retention = Object.fromEntries(Object.keys(RETENTION_KINDS).map((k) => [k, null])) as Retention;

/** The workspace's retention from its settings json; a value that is not a valid number of days (hand-edited) keeps the data. */
export function retentionOf(settings: Record<string, unknown>): Retention {
  const r = settings.retention;
  const out: Retention = { ...KEEP_EVERYTHING };
  if (typeof r !== 'object' || r === null) return out;
  for (const k of Object.keys(RETENTION_KINDS) as RetentionKind[]) {
    const v = (r as Record<string, unknown>)[k];
    if (typeof v === 'number' && Number.isInteger(v) && v >= RETENTION_KINDS[k].min && v <= MAX_RETENTION_DAYS) out[k] = v;
  }
  return out;
}

/**
 * A change checked: each value null or a whole number of days within its kind's range, and bodies
 * kept no longer than the messages they belong to. Returns the retention it makes; INVALID_INPUT
 * names every field that is wrong.
 */
export function changeRetention(current: Retention, change: Partial<Record<RetentionKind, unknown>>): Retention {
  const next: Retention = { ...current };
  const problems: Record<string, string> = {};
  for (const [k, v] of Object.entries(change)) {
    if (!(k in RETENTION_KINDS)) {
      problems[k] = 'is not a retention setting';
      continue;
    }
    const kind = k as RetentionKind;
    if (v === undefined) continue;
    if (v === null) next[kind] = null;
    else if (typeof v !== 'number' || !Number.isInteger(v) || v < RETENTION_KINDS[kind].min || v > MAX_RETENTION_DAYS)
      problems[kind] = `must be null (keep) or a whole number of days from ${RETENTION_KINDS[kind].min} to ${MAX_RETENTION_DAYS}`;
    else next[kind] = v;
  }
  const { messageBodiesDays: bodies, messagesDays: messages } = next;
  if (!problems.messageBodiesDays && messages !== null && (bodies === null || bodies > messages)) {
    // A body cannot outlive its message: the message's purge takes it.
    if (bodies !== null) problems.messageBodiesDays = `cannot be longer than messagesDays (${messages}): a message's purge removes its text`;
  }
  const fields = Object.keys(problems);
  if (fields.length) throw cadenzaError('INVALID_INPUT', fields.map((f) => `${f} ${problems[f]}`).join('; '), { fields: problems });
  return next;
}

/** The cutoff instants of `now` for one workspace: data older than each is due (null: kept). */
export function cutoffs(r: Retention, now: number): Record<RetentionKind, Date | null> {
  const at = (d: number | null) => (d === null ? null : new Date(now - d * 86_400_000));
  return Object.fromEntries((Object.keys(RETENTION_KINDS) as RetentionKind[]).map((k) => [k, at(r[k])])) as Record<RetentionKind, Date | null>;
}
