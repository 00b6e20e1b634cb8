/**
 * A saved segment's filter (issue 19): the leads list's filters over a lead's fields and activity,
 * stored as JSON on lead_list.filter and evaluated when the segment is read, so a segment is always
 * current. The same shape is a bulk action's "these leads" (targets.ts).
 */
import { z } from 'zod';
import { LEAD_HYGIENE_FILTERS, type LeadFilter } from '../sql/list-leads.ts';


/** Enrollment states a filter names; 'none': not enrolled (in sequenceId when given). */
export const FILTER_STATES = ['active', 'paused', 'replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'failed', 'moved', 'none'] as const;

/** A tag: a short word or phrase, trimmed, compared as written (lower case suggested, not forced). */
export const tagText = z
  .string()
  .trim()
  .min(1, 'a tag has at least one letter')
  .max(60, 'a tag has at most 60 characters');

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
  })
  .strict()
  .meta({ id: 'SegmentFilter' });

export type SegmentFilter = z.output<typeof segmentFilter>;

/** The filter as stored: the country in upper case, as leads hold it. (No zod transform: the schema also describes answers.) */
export function normalFilter(f: SegmentFilter): SegmentFilter {
  return f.country ? { ...f, country: f.country.toUpperCase() } : f;
}

/** The leads list's filter for a segment's (every field given must match). */
export function toLeadFilter(f: SegmentFilter): LeadFilter {
  return { ...normalFilter(f), search: f.search ?? '' };
}

/** A stored filter read back; a row written by an older version that no longer parses matches nobody rather than everybody. */
export function storedFilter(json: unknown): SegmentFilter | null {
  const r = segmentFilter.safeParse(json);
  return r.success ? r.data : null;
}
