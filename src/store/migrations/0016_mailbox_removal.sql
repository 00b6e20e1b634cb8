-- Removing a mailbox (src/mailbox/removal.ts) is a soft delete: the row stays so that what it sent
-- and received keeps its sender (shown as a removed mailbox). A removed mailbox is paused, out of
-- every sequence's pool, holds no lease and has no credential. Its address may be connected again,
-- as a new mailbox: an address is unique only among the mailboxes not removed.
alter table mailbox add column removed_at timestamptz;
alter table mailbox add column removed_by uuid references app_user(id) on delete set null;
drop index mailbox_email;
create unique index mailbox_email on mailbox (workspace_id, lower(email)) where removed_at is null;

-- A flow started from the web app is bound to the person and the session that started it: the
-- callback creates the mailbox in the flow's workspace, owned by that person, and only in that
-- session (a link carrying someone else's state is refused). Null for the CLI's loopback flows.
alter table oauth_flow add column user_id uuid references app_user(id) on delete cascade;
alter table oauth_flow add column session_hash text;
