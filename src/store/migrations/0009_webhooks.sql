-- Webhooks out (src/api/webhooks). A workspace's endpoints, and one outbox row per (endpoint,
-- event): the delivery, with its status, attempts, last error and last response code.
--
-- Deliveries are written by triggers on the tables where the facts are recorded (the engine's
-- journal `event`, `tracking_event`, `task`), so each is in the same transaction as its fact: a
-- fact that commits has its deliveries, one that rolls back has none, and no code that records a
-- fact needs to know about webhooks. A cursor over the journal was the alternative; bigserial ids
-- commit out of order (a later id can be visible before an earlier one), so a cursor would need a
-- grace lag or snapshot bookkeeping to not skip facts, and it would re-read every fact, subscribed
-- or not. The triggers are per statement (transition tables), so a batch insert (the tracking
-- batch writer) costs one join with the workspace's endpoints, and a workspace without endpoints
-- costs an index probe. Each payload names the prospect (lead id and address) and the sequence.

create table webhook_endpoint (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  url           text not null,
  -- reply, bounce, unsubscribe, sent, opened, clicked, task.due
  events        text[] not null,
  -- the HMAC-SHA256 key of the Cadenza-Signature header; returned once, when the endpoint is made
  secret        text not null,
  description   text,
  created_at    timestamptz not null default now(),
  disabled_at   timestamptz
);
create index webhook_endpoint_workspace on webhook_endpoint (workspace_id) where disabled_at is null;

create table webhook_delivery (
  id               bigserial primary key,
  endpoint_id      uuid not null references webhook_endpoint(id) on delete cascade,
  workspace_id     uuid not null,
  -- stable per fact (e.g. event:123, tracking:45, task:<uuid>): the receiver's idempotency key
  event_id         text not null,
  event_type       text not null,
  payload          jsonb not null,
  state            text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
  attempts         integer not null default 0,
  -- when the next attempt may start (at first: the fact's own time, on the engine's clock); while
  -- an attempt is in flight, when its claim lapses
  next_attempt_at  timestamptz not null,
  last_attempt_at  timestamptz,
  response_code    integer,
  last_error       text,
  delivered_at     timestamptz,
  created_at       timestamptz not null default now()
);
create unique index webhook_delivery_once on webhook_delivery (endpoint_id, event_id);
create index webhook_delivery_due on webhook_delivery (next_attempt_at) where state = 'pending';
create index webhook_delivery_log on webhook_delivery (endpoint_id, id desc);

-- Journal entries that are webhook events: replies, bounces and unsubscribes even when the
-- engine had nothing left to do (`.ignored`: the prospect still answered), sends only when applied.
create function webhook_from_event() returns trigger language plpgsql as $$
begin
  insert into webhook_delivery (endpoint_id, workspace_id, event_id, event_type, payload, next_attempt_at)
  select w.id, n.workspace_id, 'event:' || n.id, t.name,
         jsonb_build_object('enrollmentId', n.enrollment_id, 'leadId', e.lead_id, 'email', l.email, 'sequenceId', e.sequence_id, 'at', n.at,
                            'applied', n.type not like '%.ignored',
                            'detail', n.payload -> 'event',
                            'state', n.payload -> 'to'),
         n.at
  from new_rows n
  join lateral (select case split_part(n.type, '.', 1)
                  when 'reply' then 'reply' when 'bounce' then 'bounce' when 'unsubscribe' then 'unsubscribe'
                  when 'step_sent' then case when n.type = 'step_sent' then 'sent' end
                end as name) t on t.name is not null
  join webhook_endpoint w on w.workspace_id = n.workspace_id and w.disabled_at is null and t.name = any (w.events)
  left join enrollment e on e.id = n.enrollment_id
  left join lead l on l.id = e.lead_id
  on conflict do nothing;
  return null;
end $$;
create trigger webhook_event after insert on event referencing new table as new_rows
  for each statement execute function webhook_from_event();

-- Opens and clicks; a link scanner's is not a person's and is left out (its verdict is recorded).
create function webhook_from_tracking() returns trigger language plpgsql as $$
begin
  insert into webhook_delivery (endpoint_id, workspace_id, event_id, event_type, payload, next_attempt_at)
  select w.id, n.workspace_id, 'tracking:' || n.id, t.name,
         jsonb_build_object('enrollmentId', n.enrollment_id, 'leadId', e.lead_id, 'email', l.email, 'sequenceId', e.sequence_id,
                            'sendRequestId', n.send_request_id, 'at', n.at,
                            'url', n.url, 'linkIndex', n.link_index, 'verdict', n.verdict),
         n.at
  from new_rows n
  join lateral (select case n.kind when 'open' then 'opened' when 'click' then 'clicked' end as name) t on t.name is not null
  join webhook_endpoint w on w.workspace_id = n.workspace_id and w.disabled_at is null and t.name = any (w.events)
  left join enrollment e on e.id = n.enrollment_id
  left join lead l on l.id = e.lead_id
  where n.verdict is distinct from 'scanner'
  on conflict do nothing;
  return null;
end $$;
create trigger webhook_tracking after insert on tracking_event referencing new table as new_rows
  for each statement execute function webhook_from_tracking();

-- A task is created when its step comes due (call or manual step): that is "task due".
create function webhook_from_task() returns trigger language plpgsql as $$
begin
  insert into webhook_delivery (endpoint_id, workspace_id, event_id, event_type, payload, next_attempt_at)
  select w.id, n.workspace_id, 'task:' || n.id, 'task.due',
         jsonb_build_object('taskId', n.id, 'enrollmentId', n.enrollment_id, 'leadId', e.lead_id, 'email', l.email, 'sequenceId', e.sequence_id, 'stepId', n.step_id,
                            'kind', n.kind, 'title', n.title, 'dueAt', n.due_at),
         n.due_at
  from new_rows n
  join webhook_endpoint w on w.workspace_id = n.workspace_id and w.disabled_at is null and 'task.due' = any (w.events)
  join enrollment e on e.id = n.enrollment_id
  join lead l on l.id = e.lead_id
  where n.state = 'open'
  on conflict do nothing;
  return null;
end $$;
create trigger webhook_task after insert on task referencing new table as new_rows
  for each statement execute function webhook_from_task();
