import { rfc3339, type Activity, type Deal, type Person, type PipedriveStore } from './store.ts';

/**
 * Records as Pipedrive's v2 answers show them. A person's custom fields are under `custom_fields`,
 * keyed by the field's hash, every custom field present (null when empty), as v2 does.
 * `marketing_status` is an optional field: shown only when `include_fields` asks for it.
 */
export function personView(store: PipedriveStore, p: Person, include: ReadonlySet<string> = new Set()): Record<string, unknown> {
  const custom: Record<string, unknown> = {};
  for (const f of store.personFields) custom[f.key] = p.custom_fields[f.key] ?? null;
  return {
    id: p.id,
    name: p.name,
    first_name: p.first_name,
    last_name: p.last_name,
    owner_id: p.owner_id,
    org_id: p.org_id,
    add_time: rfc3339(p.add_time),
    update_time: rfc3339(p.update_time),
    emails: p.emails,
    phones: p.phones,
    is_deleted: false,
    visible_to: 3,
    label_ids: p.label_ids,
    job_title: p.job_title,
    custom_fields: custom,
    ...(include.has('marketing_status') ? { marketing_status: p.marketing_status } : {}),
  };
}

export function dealView(d: Deal): Record<string, unknown> {
  return {
    id: d.id,
    title: d.title,
    owner_id: d.owner_id,
    person_id: d.person_id,
    org_id: null,
    pipeline_id: d.pipeline_id,
    stage_id: d.stage_id,
    status: d.status,
    value: 0,
    currency: 'USD',
    add_time: rfc3339(d.add_time),
    update_time: rfc3339(d.update_time),
    is_deleted: false,
    custom_fields: {},
  };
}

export function activityView(a: Activity): Record<string, unknown> {
  const primary = a.participants.find((p) => p.primary) ?? a.participants[0];
  return {
    id: a.id,
    subject: a.subject,
    type: a.type,
    owner_id: a.owner_id,
    is_deleted: false,
    add_time: rfc3339(a.add_time),
    update_time: rfc3339(a.update_time),
    deal_id: null,
    lead_id: null,
    // Read-only in v2: the primary participant's.
    person_id: primary?.person_id ?? null,
    org_id: null,
    project_id: null,
    due_date: a.due_date,
    due_time: a.due_time,
    duration: a.duration,
    busy: a.busy,
    done: a.done,
    // GET shows `primary_flag` where POST takes `primary` (a documented v2 quirk).
    participants: a.participants.map((p) => ({ person_id: p.person_id, primary_flag: p.primary })),
    note: a.note,
  };
}
