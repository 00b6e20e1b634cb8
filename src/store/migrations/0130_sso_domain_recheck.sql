-- SSO domain proofs re-checked daily (issue 19, src/api/auth/sso/proof-recheck.ts and
-- proof-recheck-duty.ts, docs/security.md "Single sign-on").
--
-- 0116 proved a domain once, when an admin pressed Verify. Now the scheduler looks the TXT record
-- up again every day for each verified domain. A record that is gone (or holds another token)
-- counts as a failure; a failed lookup (a timeout, SERVFAIL) counts as nothing. After
-- consecutive failures spanning at least three days the domain loses its proof (verified_at
-- null: it admits nobody new), its workspace's admins are told (kind sso_attention, below) and the
-- audit log records it. A check that finds the record again ends the streak.
--
--   failures       checks in a row that did not find the record (0: none)
--   failing_since  the first of them; null when failures is 0
alter table workspace_sso_domain add column failures integer not null default 0 check (failures >= 0);
alter table workspace_sso_domain add column failing_since timestamptz;
-- The daily pass looks for verified domains checked longest ago.
create index workspace_sso_domain_recheck on workspace_sso_domain (checked_at) where verified_at is not null;

-- "Single sign-on needs attention": told to a workspace's admins and owners only (src/api/notify/
-- plan.ts), recorded by the re-check itself (no trigger: the fact is the pass's decision).
alter table notification_event drop constraint notification_event_kind_check;
alter table notification_event add constraint notification_event_kind_check check (kind in ('reply_positive', 'task_due', 'mailbox_attention', 'sso_attention'));
alter table notification_preference drop constraint notification_preference_kind_check;
alter table notification_preference add constraint notification_preference_kind_check check (kind in ('reply_positive', 'task_due', 'mailbox_attention', 'sso_attention'));
