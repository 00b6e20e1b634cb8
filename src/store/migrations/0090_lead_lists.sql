-- Lead lists, tags and saved segments (issue 19, src/leads/lists/).
--
-- A static list holds the leads put in it (lead_list_member); a segment holds none: it is a saved
-- filter over the leads' fields and activity (country, tag, enrollment, reply, address check),
-- evaluated when it is read, so it is always current. Tags are free words on a lead.
--
-- Every row hangs off its lead with `on delete cascade`: deleting a lead, or erasing a person
-- (src/privacy/erase.ts deletes their leads), removes them from every list and drops their tags.

create table lead_list (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  name          text not null check (length(name) between 1 and 200),
  kind          text not null check (kind in ('static', 'segment')),
  -- segments only: the filter (src/leads/lists/segment-filter.ts), validated by the API
  filter        jsonb check ((kind = 'segment') = (filter is not null)),
  created_by    uuid,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  unique (workspace_id, name)
);

create table lead_list_member (
  list_id       uuid not null references lead_list(id) on delete cascade,
  lead_id       uuid not null references lead(id) on delete cascade,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  added_at      timestamptz not null default now(),
  primary key (list_id, lead_id)
);
-- A lead's lists (the lead page, the "in list" filter's probe by lead).
create index lead_list_member_lead on lead_list_member (lead_id);

create table lead_tag (
  lead_id       uuid not null references lead(id) on delete cascade,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  tag           text not null check (length(tag) between 1 and 60),
  created_at    timestamptz not null default now(),
  primary key (lead_id, tag)
);
-- The workspace's tags with their counts, and the leads with a tag.
create index lead_tag_workspace on lead_tag (workspace_id, tag);
