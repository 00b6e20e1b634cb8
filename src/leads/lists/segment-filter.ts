/**
 * A saved segment's filter (issue 19): the leads list's filters over a lead's fields and activity,
 * stored as JSON on lead_list.filter and evaluated when the segment is read, so a segment is always
 * current. The same shape is a bulk action's "these leads" (targets.ts).
 */
import { z } from 'zod';
import { LEAD_HYGIENE_FILTERS, type LeadFilter } from '../sql/list-leads.ts';
import { ACTIVITY_EVENTS, CONDITION_FIELDS, type ActivityTest } from '../sql/segment-conditions.ts';


/** Enrollment states a filter names; 'none': not enrolled (in sequenceId when given). */
export const FILTER_STATES = ['active', 'paused', 'replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'failed', 'moved', 'none'] as const;

/** A tag: a short word or phrase, trimmed, compared as written (lower case suggested, not forced). */
export const tagText = z
  .string()
  .trim()
  .min(1, 'a tag has at least one letter')
  .max(60, 'a tag has at most 60 characters');

const DAY_MS = 86_400_000;

/** The most conditions of each kind a segment holds: each is a probe per candidate lead. */
export const MAX_CONDITIONS = 10;

const conditionField = {
  field: z.enum(CONDITION_FIELDS).describe('title, company, timeZone, or custom (one of the lead\'s custom fields, named by key)'),
  key: z.string().trim().min(1, 'a custom field key has at least one letter').max(100, 'a custom field key has at most 100 characters').optional().describe('field custom: the custom field'),
};
const conditionValue = z.string().trim().min(1, 'a value has at least one letter').max(200, 'a value has at most 200 characters');

export const fieldCondition = z
  .discriminatedUnion(
    'op',
    [
      z.object({ ...conditionField, op: z.literal('equals'), value: conditionValue.describe('Compared ignoring case') }).strict(),
      z.object({ ...conditionField, op: z.literal('contains'), value: conditionValue.describe('A substring, any case') }).strict(),
      z.object({ ...conditionField, op: z.literal('set') }).strict().describe('Present and not blank'),
    ],
    { error: 'op: equals, contains or set' },
  )
  .refine((c) => (c.field === 'custom') === (c.key !== undefined), { message: 'key: name the custom field (only with field custom)', path: ['key'] })
  .meta({ id: 'SegmentFieldCondition' });

/** A calendar day (midnight UTC) or an instant with its offset; refused when it is no real time. */
const when = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/, 'a date such as 2026-03-01, or a time such as 2026-03-01T09:00:00Z')
  .refine((d) => !Number.isNaN(Date.parse(d.length === 10 ? `${d}T00:00:00Z` : d)), 'no such date');
const activityEvent = { event: z.enum(ACTIVITY_EVENTS).describe('opened: by a person (not an image proxy); clicked: by a person (not a link scanner); contacted: an email sent to them') };

export const activityCondition = z
  .discriminatedUnion(
    'when',
    [
      z.object({ ...activityEvent, when: z.literal('ever') }).strict().describe('They did, at any time'),
      z.object({ ...activityEvent, when: z.literal('never') }).strict().describe('They never did'),
      z.object({ ...activityEvent, when: z.literal('after'), date: when.describe('The last time is at or after this (a date: its midnight UTC)') }).strict(),
      z.object({ ...activityEvent, when: z.literal('before'), date: when.describe('The last time is before this (and they did)') }).strict(),
      z.object({ ...activityEvent, when: z.literal('within'), days: z.number().int().min(1, 'days: at least 1').max(3650, 'days: at most 3650').describe('The last time is within this many days of now') }).strict(),
    ],
    { error: 'when: ever, never, after, before or within' },
  )
  .meta({ id: 'SegmentActivityCondition' });

export const segmentFilter = z
  .object({
    search: z.string().max(200).optional().describe('A substring of the email, name or company'),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code such as DE')
      .optional()
      .describe('Stored in upper case'),
    tag: tagText.optional().describe('Leads with this tag'),
    listId: z.uuid().optional().describe('Leads in this static list'),
    sequenceId: z.uuid().optional().describe('With enrolled or state: in this sequence'),
    enrolled: z.boolean().optional().describe('true: enrolled (in sequenceId when given); false: not enrolled there'),
    state: z.enum(FILTER_STATES).optional().describe('An enrollment in this state (in sequenceId when given); none: not enrolled'),
    replied: z.boolean().optional().describe('true: an enrollment of theirs stopped on their reply; false: none did'),
    verdict: z.enum(LEAD_HYGIENE_FILTERS).optional().describe('The address check: valid, risky, invalid; review: risky and undecided; unchecked'),
    fields: z.array(fieldCondition).min(1).max(MAX_CONDITIONS, `at most ${MAX_CONDITIONS} field conditions`).optional().describe('Lead-field conditions, each must pass'),
    activity: z.array(activityCondition).min(1).max(MAX_CONDITIONS, `at most ${MAX_CONDITIONS} activity conditions`).optional().describe('Activity conditions (on the last time), each must pass'),
  })
  .strict()
  .meta({ id: 'SegmentFilter' });

export type SegmentFilter = z.output<typeof segmentFilter>;

/** The filter as stored: the country in upper case, as leads hold it. (No zod transform: the schema also describes answers.) */
export function normalFilter(f: SegmentFilter): SegmentFilter {
  return f.country ? { ...f, country: f.country.toUpperCase() } : f;
}

type ActivityCondition = z.output<typeof activityCondition>;

const instant = (d: string) => new Date(d.length === 10 ? `${d}T00:00:00Z` : d);

/** An activity condition with its times: "within N days" counted back from `now` (the caller's clock). */
export function activityTest(a: ActivityCondition, now: number): ActivityTest {
  switch (a.when) {
    case 'ever':
      return { event: a.event, happened: true };
    case 'never':
      return { event: a.event, happened: false };
    case 'after':
      return { event: a.event, happened: true, since: instant(a.date) };
    case 'before':
      return { event: a.event, happened: true, until: instant(a.date) };
    case 'within':
      return { event: a.event, happened: true, since: new Date(now - a.days * DAY_MS) };
  }
}

/** The leads list's filter for a segment's (every field given must match), read at `now`. */
export function toLeadFilter(f: SegmentFilter, now: number): LeadFilter {
  const { activity, ...rest } = normalFilter(f);
  return { ...rest, search: f.search ?? '', ...(activity ? { activity: activity.map((a) => activityTest(a, now)) } : {}) };
}

/** A stored filter read back; a row written by an older version that no longer parses matches nobody rather than everybody. */
export function storedFilter(json: unknown): SegmentFilter | null {
  const r = segmentFilter.safeParse(json);
  return r.success ? r.data : null;
}
