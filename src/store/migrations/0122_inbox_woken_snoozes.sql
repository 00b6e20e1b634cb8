-- The unified inbox lists a snooze that came due from when it woke (issue 19 review;
-- src/inbox/sql/list.ts listInbox): its second read walks the workspace's snoozes by wake time,
-- newest first, beside the messages by arrival (message_inbound_workspace).
create index inbox_state_snoozed on inbox_state (workspace_id, snoozed_until desc) where snoozed_until is not null;
