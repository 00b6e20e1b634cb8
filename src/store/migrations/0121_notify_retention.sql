-- Notifications' retention (issue 19, src/api/notify/purge.ts, a periodic duty of the API role):
-- a read notification goes 30 days after it was read; an event, with every notification and
-- Slack post of it (cascade), 90 days after it was handed out. These indexes let the purge find
-- them without reading the tables.
create index notification_read_at on notification (read_at) where read_at is not null;
create index notification_event_fanned_out on notification_event (fanned_out_at) where fanned_out_at is not null;
