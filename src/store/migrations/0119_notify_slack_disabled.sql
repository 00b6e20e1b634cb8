-- Notifications (issue 19, src/api/notify/slack.ts): a member's Slack-compatible incoming webhook
-- that answers 404 or 410 is gone (Slack: the app was removed, the channel archived, the URL
-- revoked): it is disabled, with the reason shown in Settings > Notifications, the member's posts
-- still waiting fail with that reason, and no post is queued for it until the member saves a URL
-- again (which clears both columns).
alter table notification_setting add column slack_disabled_at timestamptz;
alter table notification_setting add column slack_disabled_reason text;
