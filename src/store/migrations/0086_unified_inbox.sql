-- The unified inbox (issue 19, src/inbox/): triage state per inbound message, read state per
-- person, the team's own labels, notes on a conversation, saved views, the HTML of a reply (shown
-- in a sandboxed frame, src/inbox/reply-html.ts), and the search index.
--
-- Every table here is the API role's alone (src/ops/mtls/db-grants.ts): only the inbox routes
-- read or write them. Rows that hang off a message go with it (retention, erasure, a removed
-- mailbox) by cascade.

-- The reply as HTML, cut at ingest (src/ingest/pipeline.ts, 256 KiB): the frame shows it; the
-- stored text columns stay what classification and search read.
alter table message add column body_html text;

-- Search over sender, subject and text (the stored excerpt, 2 000 characters): one GIN index on
-- this exact expression, which src/inbox/sql/search.ts repeats. 'simple' keeps every word (no
-- stemming, no stop words: names and company words are what people type); an address's
-- punctuation becomes spaces so "dana@acme.test" is found by "dana" or "acme".
create index message_inbox_search on message using gin (
  to_tsvector('simple'::regconfig,
    translate(coalesce(from_addr, ''), '@.<>"_+-', '         ') || ' ' || coalesce(subject, '') || ' ' || coalesce(excerpt, ''))
) where direction = 'inbound';

-- What the team decided about an inbound message: who handles it, until when it sleeps, whether
-- it is done (archived). No row: in the inbox, unassigned.
create table inbox_state (
  message_id        uuid primary key references message(id) on delete cascade,
  workspace_id      uuid not null references workspace(id) on delete cascade,
  assignee_user_id  uuid references app_user(id) on delete set null,
  snoozed_until     timestamptz,
  done_at           timestamptz,
  updated_at        timestamptz not null default now()
);
create index inbox_state_assignee on inbox_state (workspace_id, assignee_user_id) where assignee_user_id is not null;

-- Read, per person: a message is unread for whoever has no row.
create table inbox_read (
  message_id  uuid not null references message(id) on delete cascade,
  user_id     uuid not null references app_user(id) on delete cascade,
  read_at     timestamptz not null,
  primary key (user_id, message_id)
);
create index inbox_read_message on inbox_read (message_id);

-- Labels the team defines, beside the classifier's (message.label).
create table inbox_label (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  name          text not null check (length(name) between 1 and 40),
  color         text not null default 'gray' check (color in ('gray', 'blue', 'green', 'amber', 'red', 'purple')),
  created_at    timestamptz not null default now()
);
create unique index inbox_label_name on inbox_label (workspace_id, lower(name));

create table inbox_message_label (
  message_id  uuid not null references message(id) on delete cascade,
  label_id    uuid not null references inbox_label(id) on delete cascade,
  added_by    uuid references app_user(id) on delete set null,
  added_at    timestamptz not null,
  primary key (message_id, label_id)
);
create index inbox_message_label_label on inbox_message_label (label_id);

-- Internal notes on a conversation (never sent): personal data (docs/privacy.md).
create table inbox_note (
  id                uuid primary key,
  workspace_id      uuid not null references workspace(id) on delete cascade,
  message_id        uuid not null references message(id) on delete cascade,
  author_user_id    uuid references app_user(id) on delete set null,
  body              text not null check (length(body) between 1 and 5000),
  created_at        timestamptz not null
);
create index inbox_note_message on inbox_note (message_id, created_at);

-- A person's saved views: a name and a filter set (src/inbox/filter.ts). The filters may hold a
-- search naming someone: personal data (docs/privacy.md).
create table inbox_view (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  user_id       uuid not null references app_user(id) on delete cascade,
  name          text not null check (length(name) between 1 and 60),
  filters       jsonb not null,
  created_at    timestamptz not null
);
create unique index inbox_view_name on inbox_view (user_id, lower(name));
