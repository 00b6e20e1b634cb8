-- The email editor (issue 19, docs/web.md "The email editor").
--
-- variant.body_html: an email step's rich text, sanitized by the server's allow-list before it is
-- stored (common/email-html.ts); null for a text-only step. variant.body stays the text/plain part,
-- always present: made from the HTML unless the rep wrote their own.
alter table variant add column body_html text;

-- A mailbox's signature, appended to every email it sends at compose time (sanitized HTML and its
-- plain text); null: none.
alter table mailbox add column signature_html text;
alter table mailbox add column signature_text text;

-- The workspace's template library: a saved email (subject, HTML, text) to insert into a step.
create table email_template (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  name          text not null check (length(name) between 1 and 200),
  subject       text not null default '',
  body_html     text,
  body_text     text not null,
  created_by    uuid,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  unique (workspace_id, name)
);
