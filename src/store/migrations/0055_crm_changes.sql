-- CRM sync, changes in (issue 17, src/crm/change-reader.ts, docs/crm.md "Changes in"): what each
-- connection reads from its CRM, where it stands, what it owns, and what it did about it.
--
-- crm_connection, added
--   change_cursor     the reader's resume position (opaque, the connector's); advanced only in the
--                     transaction that stores the changes it covers (a crash between a read and its
--                     store reads them again: the mirror's updated_at makes that a no-op)
--   change_cursor_at  when it last advanced
--   last_change_at    the newest CRM modify time read: the sync position shown to admins
--   read_error        the reader's last failure (cleared by a round that succeeds)
--   field_owners      overrides of the field-ownership defaults (src/crm/field-ownership.ts
--                     DEFAULT_FIELD_OWNERS), field -> 'crm' | 'cadenza'; the fixed ones are never stored
--   stop_rules        overrides of the stop rules' defaults (src/crm/stop-rules.ts)
--   integration_user_id
--                     the CRM user the connection acts as: changes it made are Cadenza's own, ignored
-- crm_contact         the mirror of the CRM's contacts, one row per (connection, CRM id)
--   lead_id           Cadenza's lead with the same address in the workspace, when there is one
--   fields            the synced fields as the CRM last had them (src/crm/field-ownership.ts names)
--   updated_at        the CRM's modify time of that version: a change not newer is one already stored
--   cadenza_written   the Cadenza-owned fields as Cadenza last wrote them to the CRM: a CRM-side value
--                     that differs is a person's edit, logged as a conflict, never taken
--   cadenza_pending   Cadenza-owned fields waiting to be written (null: none); set by the journal
--                     trigger below, coalesced per contact until the sync writes them
-- crm_deal            the mirror of deals (what the stop rules look at)
-- crm_conflict        a CRM-side edit of a Cadenza-owned field: logged once per (contact, field, CRM
--                     modify time), not applied
-- crm_list_enrollment an admin's "enroll this CRM list in that sequence", once or continuously
--   next_page         where the read of the list stands (a once-read resumes there after a crash)
-- crm_list_member     each member a list enrollment has handled, with what came of it: a member is
--                     enrolled at most once per list enrollment, whatever the list does later
alter table crm_connection
  add column change_cursor       text,
  add column change_cursor_at    timestamptz,
  add column last_change_at      timestamptz,
  add column read_error          text,
  add column field_owners        jsonb not null default '{}',
  add column stop_rules          jsonb not null default '{}',
  add column integration_user_id text;

create table crm_contact (
  connection_id    uuid not null references crm_connection(id) on delete cascade,
  crm_id           text not null,
  workspace_id     uuid not null,
  email            text,
  lead_id          uuid references lead(id) on delete set null,
  fields           jsonb not null,
  updated_at       timestamptz not null,
  updated_by       text,
  cadenza_written  jsonb not null default '{}',
  cadenza_pending  jsonb,
  read_at          timestamptz not null default now(),
  primary key (connection_id, crm_id)
);
create index crm_contact_email on crm_contact (workspace_id, email);
create index crm_contact_lead on crm_contact (lead_id) where lead_id is not null;
create index crm_contact_pending on crm_contact (connection_id) where cadenza_pending is not null;

create table crm_deal (
  connection_id   uuid not null references crm_connection(id) on delete cascade,
  crm_id          text not null,
  workspace_id    uuid not null,
  name            text not null,
  stage           text not null,
  contact_emails  text[] not null default '{}',
  owner_email     text,
  created_at      timestamptz not null,
  updated_at      timestamptz not null,
  read_at         timestamptz not null default now(),
  primary key (connection_id, crm_id)
);
create index crm_deal_emails on crm_deal using gin (contact_emails);

create table crm_conflict (
  id              bigserial primary key,
  connection_id   uuid not null references crm_connection(id) on delete cascade,
  workspace_id    uuid not null,
  crm_id          text not null,
  email           text,
  field           text not null,
  crm_value       text,
  cadenza_value   text,
  crm_updated_at  timestamptz not null,
  crm_updated_by  text,
  at              timestamptz not null default now()
);
create unique index crm_conflict_once on crm_conflict (connection_id, crm_id, field, crm_updated_at);
create index crm_conflict_recent on crm_conflict (connection_id, id desc);

create table crm_list_enrollment (
  id              uuid primary key,
  connection_id   uuid not null references crm_connection(id) on delete cascade,
  workspace_id    uuid not null,
  list_id         text not null,
  list_name       text not null,
  sequence_id     uuid not null references sequence(id) on delete cascade,
  mode            text not null check (mode in ('once', 'continuous')),
  state           text not null default 'active' check (state in ('active', 'done', 'stopped')),
  next_page       text,
  enrolled        integer not null default 0,
  refused         integer not null default 0,
  last_run_at     timestamptz,
  last_error      text,
  created_by      text,
  created_at      timestamptz not null default now()
);
create unique index crm_list_enrollment_once on crm_list_enrollment (connection_id, list_id, sequence_id) where state = 'active';

create table crm_list_member (
  list_enrollment_id  uuid not null references crm_list_enrollment(id) on delete cascade,
  crm_id              text not null,
  lead_id             uuid references lead(id) on delete cascade,
  outcome             text not null,
  at                  timestamptz not null default now(),
  primary key (list_enrollment_id, crm_id)
);
create index crm_list_member_lead on crm_list_member (lead_id);

-- Cadenza-owned fields out: each journal entry (a step sent, a reply, a stop: every state change
-- and activity the engine records) queues the lead's sequence status and last activity for the
-- mirrored contacts of its address, merged into what is already waiting, so a contact gets one
-- write per sync round however many entries came. A statement trigger, as 0054's: the entries of
-- one statement are one update, and an enrollment's state is read after the statement that
-- changed it. A workspace without a CRM pays an index probe on crm_contact_lead.
create function crm_fields_from_event() returns trigger language plpgsql as $$
begin
  update crm_contact c
  set cadenza_pending = coalesce(c.cadenza_pending, '{}'::jsonb) || jsonb_build_object(
        'cadenzaSequenceStatus', x.state,
        'cadenzaLastActivityAt', to_char(x.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
  from (
    select distinct on (e.lead_id) e.lead_id, e.state, n.at
    from new_rows n
    join enrollment e on e.id = n.enrollment_id
    order by e.lead_id, n.at desc, n.id desc
  ) x
  where c.lead_id = x.lead_id;
  return null;
end $$;
create trigger crm_fields_event after insert on event referencing new table as new_rows
  for each statement execute function crm_fields_from_event();
