-- Cadenza data model, first full version. Later migrations extend it; they never rewrite it.
-- Times are timestamptz (absolute instants); local-time reasoning happens in sequence/calendar.

create table workspace (
  id          uuid primary key,
  name        text not null,
  time_zone   text not null default 'UTC',
  country     text,
  settings    jsonb not null default '{}',
  created_at  timestamptz not null default now()
);

create table app_user (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  email         text not null,
  name          text,
  role          text not null default 'member' check (role in ('owner', 'admin', 'member')),
  created_at    timestamptz not null default now()
);
create unique index app_user_email on app_user (workspace_id, lower(email));

create table mailbox (
  id              uuid primary key,
  workspace_id    uuid not null references workspace(id) on delete cascade,
  user_id         uuid references app_user(id) on delete set null,
  email           text not null,
  display_name    text,
  provider        text not null check (provider in ('smtp_imap', 'gmail', 'graph')),
  daily_cap       integer not null default 30 check (daily_cap >= 0),
  hourly_cap      integer check (hourly_cap >= 0),
  -- ramp-up for a new mailbox: {"start":5,"step":3,"target":30} and when it began
  ramp            jsonb not null default '{}',
  ramp_started_at timestamptz,
  health          text not null default 'ok' check (health in ('ok', 'warning', 'paused', 'error')),
  health_reason   text,
  time_zone       text,
  settings        jsonb not null default '{}',
  created_at      timestamptz not null default now()
);
create unique index mailbox_email on mailbox (workspace_id, lower(email));

create table lead (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  email         text not null,
  email_norm    text not null,
  first_name    text,
  last_name     text,
  company       text,
  title         text,
  phone         text,
  country       text,
  region        text,
  time_zone     text,
  custom        jsonb not null default '{}',
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create unique index lead_email on lead (workspace_id, email_norm);

create table sequence (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  key           text not null,
  name          text not null,
  status        text not null default 'active' check (status in ('draft', 'active', 'paused', 'archived')),
  -- send window, stop rules and other settings as validated by sequence/definition.ts
  send_window   jsonb not null,
  stop_rules    jsonb not null default '{}',
  settings      jsonb not null default '{}',
  version       integer not null default 1,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create unique index sequence_key on sequence (workspace_id, key);

create table sequence_mailbox (
  sequence_id  uuid not null references sequence(id) on delete cascade,
  mailbox_id   uuid not null references mailbox(id) on delete cascade,
  primary key (sequence_id, mailbox_id)
);

-- A step keeps its id for life: send requests and tasks are keyed by it, never by position.
-- A removed step is archived (archived_at), not deleted, so history and the edit rule can see
-- where it stood.
create table step (
  id            uuid primary key,
  sequence_id   uuid not null references sequence(id) on delete cascade,
  key           text not null,
  position      integer not null,
  kind          text not null check (kind in ('email', 'call', 'manual', 'wait')),
  delay_amount  integer not null default 0 check (delay_amount >= 0),
  delay_unit    text not null default 'days' check (delay_unit in ('minutes', 'hours', 'days', 'business_days')),
  config        jsonb not null default '{}',
  archived_at   timestamptz,
  created_at    timestamptz not null default now()
);
create unique index step_key on step (sequence_id, key);

create table variant (
  id          uuid primary key,
  step_id     uuid not null references step(id) on delete cascade,
  key         text not null,
  subject     text,
  body        text not null,
  weight      integer not null default 1 check (weight >= 0),
  archived_at timestamptz,
  created_at  timestamptz not null default now()
);
create unique index variant_key on variant (step_id, key);

create table enrollment (
  id                uuid primary key,
  workspace_id      uuid not null references workspace(id) on delete cascade,
  sequence_id       uuid not null references sequence(id) on delete cascade,
  lead_id           uuid not null references lead(id) on delete cascade,
  mailbox_id        uuid references mailbox(id) on delete set null,
  state             text not null check (state in ('active', 'paused', 'replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'failed')),
  state_reason      text,
  -- what the enrollment is waiting for: its timer (due_at), the sender, or a person's task
  waiting_for       text check (waiting_for in ('timer', 'send', 'task')),
  next_step_id      uuid references step(id),
  last_step_id      uuid references step(id),
  last_step_at      timestamptz,
  -- every step this enrollment has run, so an edit that reorders steps can never run one twice
  done_step_ids     uuid[] not null default '{}',
  -- the durable timer: when state = active it fires step_due, when paused it fires resume
  due_at            timestamptz,
  paused_due_at     timestamptz,
  time_zone         text not null,
  zone_source       text not null,
  soft_bounces      integer not null default 0,
  version           integer not null default 0,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now()
);
create unique index enrollment_lead on enrollment (sequence_id, lead_id);
create index enrollment_due on enrollment (due_at) where due_at is not null and state in ('active', 'paused');
create index enrollment_lead_state on enrollment (lead_id, state);
create index enrollment_sequence_state on enrollment (sequence_id, state);

-- The outbox. (enrollment_id, step_id) is the idempotency key of promise 1: a unique constraint,
-- so a second request for the same step cannot exist whatever the callers do.
create table send_request (
  id             uuid primary key,
  workspace_id   uuid not null references workspace(id) on delete cascade,
  enrollment_id  uuid not null references enrollment(id) on delete cascade,
  step_id        uuid not null references step(id),
  mailbox_id     uuid references mailbox(id) on delete set null,
  variant_id     uuid references variant(id),
  state          text not null default 'queued' check (state in ('queued', 'in_flight', 'sent', 'failed', 'cancelled', 'unknown')),
  due_at         timestamptz not null,
  message_id     text,
  attempts       integer not null default 0,
  last_error     text,
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now()
);
create unique index send_request_key on send_request (enrollment_id, step_id);
create index send_request_queue on send_request (mailbox_id, due_at) where state = 'queued';

create table message (
  id             uuid primary key,
  workspace_id   uuid not null references workspace(id) on delete cascade,
  mailbox_id     uuid references mailbox(id) on delete set null,
  enrollment_id  uuid references enrollment(id) on delete set null,
  send_request_id uuid references send_request(id) on delete set null,
  direction      text not null check (direction in ('outbound', 'inbound')),
  message_id     text not null,
  in_reply_to    text,
  refs           text[] not null default '{}',
  thread_id      text,
  subject        text,
  from_addr      text,
  to_addrs       text[] not null default '{}',
  at             timestamptz not null,
  created_at     timestamptz not null default now()
);
create unique index message_mailbox_msgid on message (mailbox_id, message_id);
create index message_enrollment on message (enrollment_id);
create index message_thread on message (thread_id);

create table task (
  id             uuid primary key,
  workspace_id   uuid not null references workspace(id) on delete cascade,
  enrollment_id  uuid not null references enrollment(id) on delete cascade,
  step_id        uuid not null references step(id),
  kind           text not null check (kind in ('call', 'manual')),
  state          text not null default 'open' check (state in ('open', 'done', 'skipped', 'cancelled')),
  title          text not null,
  notes          text,
  outcome        text,
  due_at         timestamptz not null,
  completed_at   timestamptz,
  created_at     timestamptz not null default now()
);
create unique index task_key on task (enrollment_id, step_id);
create index task_open on task (workspace_id, due_at) where state = 'open';

-- Append-only journal of every applied transition. Partitioned by month so old months can be
-- detached and archived; store/partitions.ts creates the months ahead, the default partition
-- catches anything outside them.
create table event (
  id             bigserial,
  workspace_id   uuid not null,
  enrollment_id  uuid,
  type           text not null,
  payload        jsonb not null default '{}',
  at             timestamptz not null,
  primary key (at, id)
) partition by range (at);
create table event_default partition of event default;
create index event_enrollment on event (enrollment_id, at);

-- One opt-out is everywhere (promise 6): keyed by workspace and normalised address.
create table suppression (
  workspace_id  uuid not null references workspace(id) on delete cascade,
  email_norm    text not null,
  reason        text not null check (reason in ('hard_bounce', 'unsubscribe', 'complaint', 'manual')),
  source        text,
  created_at    timestamptz not null default now(),
  primary key (workspace_id, email_norm)
);
