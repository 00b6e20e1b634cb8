-- Notifications (issue 19, src/api/notify/): a positive reply, a task due, a mailbox that needs
-- attention, told to the people who asked, in the app (the bell, and the browser's own
-- notifications), by an email digest and by a Slack-compatible incoming webhook.
--
-- The fact is recorded once, by trigger, in the transaction of the process that owns it: the sync
-- role's insert of the reply (as 0081's reply.interested webhook), the scheduler's insert of the
-- task (as 0009's task.due), and whichever role changes a mailbox's health (the sender, the sync
-- role, the API, the warmup evaluator). The event is keyed by its source (unique per workspace):
--   reply:<message id>                     an inbound reply the classifier read as interested
--   task:<task id>                         a call or manual task, created when its step came due
--   mailbox:<id>:<health>:<md5(reason)>:<day>   a mailbox that went to warning, paused or error
-- so a second insert of the same fact changes nothing (on conflict do nothing). A mailbox that
-- stays in one state is told once; the same problem again on a later day is told again.
--
-- The people, their choices and the deliveries are the API role's (members' addresses, app_user,
-- are the API's alone): its fan-out reads new events and writes one notification per member who
-- wants it, and its delivery duty sends the digests and the Slack posts (src/api/notify/).

create table notification_event (
  id            bigserial primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  source_key    text not null,
  kind          text not null check (kind in ('reply_positive', 'task_due', 'mailbox_attention')),
  -- the rep the fact concerns (the mailbox's owner), null: the whole workspace
  user_id       uuid,
  title         text not null,
  body          text not null,
  -- the prospect it names (replies, tasks): erasing the lead (src/privacy/erase.ts) takes the
  -- event, and every notification of it, with it
  lead_id       uuid references lead(id) on delete cascade,
  -- the app's path the notification opens (/inbox, /tasks, /mailboxes)
  link          text not null,
  occurred_at   timestamptz not null default now(),
  fanned_out_at timestamptz,
  unique (workspace_id, source_key)
);
create index notification_event_pending on notification_event (id) where fanned_out_at is null;
create index notification_event_lead on notification_event (lead_id) where lead_id is not null;

-- A member's choice per kind of event and channel; no row: the defaults (notify/preferences.ts).
create table notification_preference (
  workspace_id  uuid not null references workspace(id) on delete cascade,
  user_id       uuid not null,
  kind          text not null check (kind in ('reply_positive', 'task_due', 'mailbox_attention')),
  in_app        boolean not null,
  browser       boolean not null,
  email         boolean not null,
  slack         boolean not null,
  primary key (workspace_id, user_id, kind)
);

-- A member's channel settings: whose events (theirs or the workspace's), the digest's rhythm and
-- its schedule, the Slack URL sealed with the workspace's data key (a secret: it alone lets anyone
-- post to the channel), and only its host shown back.
create table notification_setting (
  workspace_id       uuid not null references workspace(id) on delete cascade,
  user_id            uuid not null,
  scope              text not null default 'mine' check (scope in ('mine', 'all')),
  digest_every_hours integer not null default 24 check (digest_every_hours in (1, 4, 24)),
  digest_last_at     timestamptz,
  digest_next_at     timestamptz,
  digest_attempts    integer not null default 0,
  digest_error       text,
  slack_url_sealed   bytea,
  slack_host         text,
  updated_at         timestamptz not null default now(),
  primary key (workspace_id, user_id)
);

-- One event for one member: in the bell (in_app), shown by the browser (browser), waiting for the
-- next digest (email_state 'pending' → 'sent').
create table notification (
  id            bigserial primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  user_id       uuid not null,
  event_id      bigint not null references notification_event(id) on delete cascade,
  in_app        boolean not null,
  browser       boolean not null,
  email_state   text not null default 'none' check (email_state in ('none', 'pending', 'sent')),
  read_at       timestamptz,
  created_at    timestamptz not null default now(),
  unique (user_id, event_id)
);
create index notification_bell on notification (workspace_id, user_id, id desc) where in_app;
create index notification_digest on notification (workspace_id, user_id) where email_state = 'pending';

-- Slack posts: one per (member, event), retried with backoff, never blocking another's.
create table notification_slack (
  id              bigserial primary key,
  workspace_id    uuid not null references workspace(id) on delete cascade,
  user_id         uuid not null,
  event_id        bigint not null references notification_event(id) on delete cascade,
  state           text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
  attempts        integer not null default 0,
  next_attempt_at timestamptz not null,
  last_error      text,
  response_code   integer,
  delivered_at    timestamptz,
  unique (user_id, event_id)
);
create index notification_slack_due on notification_slack (next_attempt_at) where state = 'pending';

-- The reply: as 0081, fired once per stored inbound message read as interested.
create function notify_from_message() returns trigger language plpgsql as $$
begin
  insert into notification_event (workspace_id, source_key, kind, user_id, lead_id, title, body, link, occurred_at)
  select n.workspace_id, 'reply:' || n.id, 'reply_positive', m.user_id, l.id,
         'Interested reply from ' || coalesce(nullif(trim(coalesce(l.first_name, '') || ' ' || coalesce(l.last_name, '')), ''), l.email),
         coalesce(n.subject, '(no subject)'), '/inbox',
         least(coalesce(n.received_at, n.at), n.created_at)
  from new_rows n
  join enrollment e on e.id = n.enrollment_id
  join lead l on l.id = e.lead_id
  left join mailbox m on m.id = n.mailbox_id
  where n.direction = 'inbound' and n.intent = 'interested'
  on conflict do nothing;
  return null;
end $$;
create trigger notify_message after insert on message referencing new table as new_rows
  for each statement execute function notify_from_message();

-- The task: created when its step comes due (0009's "task due").
create function notify_from_task() returns trigger language plpgsql as $$
begin
  insert into notification_event (workspace_id, source_key, kind, user_id, lead_id, title, body, link, occurred_at)
  select n.workspace_id, 'task:' || n.id, 'task_due', m.user_id, l.id,
         case when n.kind = 'call' then 'Call due: ' else 'Task due: ' end || l.email,
         n.title, '/tasks', n.due_at
  from new_rows n
  join enrollment e on e.id = n.enrollment_id
  join lead l on l.id = e.lead_id
  left join mailbox m on m.id = e.mailbox_id
  where n.state = 'open'
  on conflict do nothing;
  return null;
end $$;
create trigger notify_task after insert on task referencing new table as new_rows
  for each statement execute function notify_from_task();

-- The mailbox: into warning, paused (bounces, refused credentials) or error, from anything else.
create function notify_from_mailbox() returns trigger language plpgsql as $$
begin
  insert into notification_event (workspace_id, source_key, kind, user_id, title, body, link)
  select n.id_ws, 'mailbox:' || n.id || ':' || n.health || ':' || md5(coalesce(n.health_reason, '')) || ':' || to_char(now() at time zone 'UTC', 'YYYY-MM-DD'),
         'mailbox_attention', n.user_id,
         n.email || case n.health when 'warning' then ' needs attention' when 'paused' then ' is paused' else ' cannot send' end,
         coalesce(n.health_reason, 'Open Mailboxes to see why.'), '/mailboxes'
  from (select new.workspace_id as id_ws, new.*) n
  where new.health in ('warning', 'paused', 'error') and new.health is distinct from old.health
    and new.removed_at is null
  on conflict do nothing;
  return null;
end $$;
create trigger notify_mailbox after update of health on mailbox
  for each row execute function notify_from_mailbox();
