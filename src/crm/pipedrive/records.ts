import type { CrmContact, CrmDeal } from '../connector.ts';

/**
 * Pipedrive's v2 persons and deals in Cadenza's words.
 *
 *   person  email: the primary address (else the first), lowercased; title: job_title; phone: the
 *           primary phone; lifecycleStage: the first label id (label names need the label
 *           field's options: not read); doNotContact: marketing_status 'unsubscribed' (asked for
 *           with include_fields=marketing_status); company: null (the organization's name is a
 *           second lookup Cadenza does not make).
 *   deal    stage: the stage id while the deal is open, 'won' or 'lost' once closed (Pipedrive
 *           closes a deal by status, not by moving it to a stage); stageLabel: the stage's name,
 *           or Won / Lost.
 *
 * updatedBy is null: Pipedrive's lists do not say who made the last change (its webhooks do, in
 * meta.user_id).
 */
export interface PdPerson {
  id: number;
  name?: string;
  first_name?: string | null;
  last_name?: string | null;
  emails?: Array<{ value: string; primary?: boolean }>;
  phones?: Array<{ value: string; primary?: boolean }>;
  owner_id?: number | null;
  label_ids?: number[];
  job_title?: string | null;
  marketing_status?: string;
  update_time: string;
}

export interface PdDeal {
  id: number;
  title: string;
  person_id: number | null;
  stage_id: number;
  status: string;
  owner_id?: number | null;
  add_time: string;
  update_time: string;
}

export function primaryEmail(p: PdPerson): string | null {
  const e = p.emails?.find((x) => x.primary) ?? p.emails?.[0];
  return e?.value ? e.value.trim().toLowerCase() : null;
}

export function toContact(p: PdPerson, ownerEmail: (id: number | null | undefined) => string | null): CrmContact {
  const phone = p.phones?.find((x) => x.primary) ?? p.phones?.[0];
  return {
    crmId: String(p.id),
    email: primaryEmail(p),
    firstName: p.first_name ?? null,
    lastName: p.last_name ?? null,
    company: null,
    title: p.job_title ?? null,
    phone: phone?.value ?? null,
    ownerEmail: ownerEmail(p.owner_id),
    lifecycleStage: p.label_ids?.length ? String(p.label_ids[0]) : null,
    doNotContact: p.marketing_status === 'unsubscribed',
    updatedAt: iso(p.update_time),
    updatedBy: null,
  };
}

export function toDeal(d: PdDeal, stageName: (id: number) => string | null, personEmail: (id: number) => string | null, ownerEmail: (id: number | null | undefined) => string | null): CrmDeal {
  const closed = d.status === 'won' || d.status === 'lost';
  const email = d.person_id === null ? null : personEmail(d.person_id);
  return {
    crmId: String(d.id),
    name: d.title,
    stage: closed ? d.status : String(d.stage_id),
    stageLabel: closed ? (d.status === 'won' ? 'Won' : 'Lost') : stageName(d.stage_id),
    contactEmails: email ? [email] : [],
    ownerEmail: ownerEmail(d.owner_id),
    createdAt: iso(d.add_time),
    updatedAt: iso(d.update_time),
    updatedBy: null,
  };
}

/** Pipedrive's RFC 3339 ("2026-01-05T09:30:00Z") as Cadenza's ISO 8601 with milliseconds. */
export function iso(t: string): string {
  const ms = Date.parse(t);
  if (!Number.isFinite(ms)) throw new Error(`Pipedrive sent an update time that is not an instant: ${t}`);
  return new Date(ms).toISOString();
}
