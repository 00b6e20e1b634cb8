/**
 * What crosses between installations, and its checks at the edge. Only addresses with their
 * labels and schedules, and placement reports: never a message's text, a subject, a name or a
 * credential. Every field is bounded; a body that breaks a bound is refused whole with what broke
 * (INVALID_INPUT naming the field), before anything is written.
 *
 *   POST /federation/v1/exchange  request: our members, our schedule for their members, our reports
 *                                 of their mail; answer: their members, which schedule entries they
 *                                 accepted (and which not, why), their reports of our mail.
 *   POST /federation/v1/leave     the peering ends (best effort; refusals say it too).
 */
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';

export const EXCHANGE_PATH = '/federation/v1/exchange';
export const LEAVE_PATH = '/federation/v1/leave';
export const CARD_PATH = '/federation/card';
/** The content type of a signed body: its own, so the API's JSON parser never reads (and re-encodes) it. */
export const FEDERATION_TYPE = 'application/vnd.cadenza-federation+json';
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
export const MAX_MEMBERS = 2_000;
export const MAX_SCHEDULE = 20_000;

const address = z
  .string()
  .max(254)
  .regex(/^[^\s@<>"]{1,64}@[a-z0-9.-]{1,253}$/i, 'an address like name@example.com');
const messageId = z
  .string()
  .max(250)
  .regex(/^<[^\s<>]{1,200}@[^\s<>]{1,200}>$/, 'a Message-ID like <id@host>');
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM');
const zone = z
  .string()
  .max(64)
  .refine((s) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: s });
      return true;
    } catch {
      return false;
    }
  }, 'an IANA time zone');
const instant = z.number().int().min(0).max(8.64e15);

export const remoteMember = z.strictObject({
  address,
  // provider.ts's labels: 'google', 'zoho', … or 'self:example.com' / 'host:example.net'.
  provider: z.string().regex(/^[a-z0-9][a-z0-9.:-]{0,127}$/, 'a provider label (a-z, 0-9, dots, colons and dashes)'),
  domain: z.string().max(253).regex(/^[a-z0-9.-]+$/, 'a lower-case domain'),
  timeZone: zone,
  dayStart: hhmm,
  dayEnd: hhmm,
  capacity: z.number().int().min(0).max(200),
});
export type RemoteMember = z.infer<typeof remoteMember>;

export const scheduledSend = z.strictObject({ messageId, sender: address, receiver: address, at: instant });
export type ScheduledSend = z.infer<typeof scheduledSend>;

export const placementReport = z.strictObject({ messageId, folder: z.enum(['inbox', 'junk']), at: instant });
export type PlacementReport = z.infer<typeof placementReport>;

export const exchangeRequest = z.strictObject({
  members: z.array(remoteMember).max(MAX_MEMBERS),
  schedule: z.array(scheduledSend).max(MAX_SCHEDULE),
  reports: z.array(placementReport).max(MAX_SCHEDULE),
});
export type ExchangeRequest = z.infer<typeof exchangeRequest>;

export const exchangeAnswer = z.strictObject({
  members: z.array(remoteMember).max(MAX_MEMBERS),
  accepted: z.array(messageId).max(MAX_SCHEDULE),
  refused: z.array(z.strictObject({ messageId, reason: z.string().max(200) })).max(MAX_SCHEDULE),
  reports: z.array(placementReport).max(MAX_SCHEDULE),
});
export type ExchangeAnswer = z.infer<typeof exchangeAnswer>;

export const leaveNotice = z.strictObject({ reason: z.string().max(200) });

export const federationCard = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(500),
  name: z.string().min(1).max(100),
  signKey: z.string().length(44),
  agreeKey: z.string().length(44),
});

/** Parses a signed body: JSON, then the schema; INVALID_INPUT names the first broken field. */
export function readBody<T>(schema: z.ZodType<T>, raw: Buffer): T {
  if (raw.length > MAX_BODY_BYTES) throw cadenzaError('INVALID_INPUT', `the body is over ${MAX_BODY_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw cadenzaError('INVALID_INPUT', 'the body is not JSON');
  }
  const r = schema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.join('.') || '(body)';
    throw cadenzaError('INVALID_INPUT', `${field}: ${issue.message}`, { field, issues: r.error.issues.length });
  }
  return r.data;
}
