-- Pacing defaults per workspace (issue 10): a mailbox inherits its workspace's daily cap, hourly
-- cap and ramp (workspace.settings.mailboxCaps) unless it sets its own, as it already inherited
-- settings.pacing field by field. In these columns null now means "inherit"; a ramp of '{}'
-- stays an explicit "no ramp". Rows already there keep their values, so nothing they send changes.
alter table mailbox alter column daily_cap drop not null;
alter table mailbox alter column daily_cap drop default;
alter table mailbox alter column ramp drop not null;
alter table mailbox alter column ramp drop default;
