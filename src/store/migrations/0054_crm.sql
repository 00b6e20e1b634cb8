-- CRM sync (issue 17, src/crm/, docs/crm.md): a workspace's connections to its CRMs, and the
-- outbox of activities each connection writes, exactly once per fact.
--
-- Activities are queued by triggers on the tables where the facts are recorded (the engine's
-- journal `event`, `tracking_event`, `task`, `phone_call`), as webhook deliveries are
-- (0009_webhooks.sql, which says why a trigger and not a cursor over the journal): a fact that
-- commits has its activities, one that rolls back has none, and no code that records a fact needs
-- to know about CRMs. A workspace without a connection pays an index probe.
--
-- crm_connection
--   kind          hubspot, salesforce, pipedrive or twenty (src/crm/<kind>/)
--   base_url      the CRM's API (its emulator's in tests)
--   credentials   the API token, or the OAuth tokens, sealed with the workspace's data key
--                 (src/mailbox/vault.ts, context 'crm:<connection id>'); never returned by the API
--   activities    which kinds go out (all by default)
--   state         active, or paused with a reason (credentials refused or revoked): the outbox
--                 keeps filling and is written once the connection is fixed
--   lease_owner, lease_until
--                 the writer process that drains this connection until then: one at a time, so
--                 the CRM's request limit is counted in one place (src/crm/writer.ts)
-- crm_activity
--   external_id   stable per fact ('cadenza:event:<id>', 'cadenza:tracking:<id>',
--                 'cadenza:task:<id>', 'cadenza:call:<id>'), written into the CRM record so that a
--                 retry after a lost answer finds it instead of writing it twice
--   payload       what the fact says (the writer turns it into the CRM's words, src/crm/activity.ts)
--   state         pending -> written (crm_id set), or skipped (no such contact in the CRM) or
--                 rejected (the CRM refused it for good, last_error says why)
--   next_attempt_at  when the next attempt may start; a claim moves it past the claim's deadline,
--                 so a writer that died mid-batch leaves it to the next after that
create table crm_connection (
  id             uuid primary key,
  workspace_id   uuid not null references workspace(id) on delete cascade,
  kind           text not null check (kind in ('hubspot', 'salesforce', 'pipedrive', 'twenty')),
  base_url       text not null,
  credentials    bytea not null,
  activities     text[] not null default array['email_sent', 'email_opened', 'email_clicked', 'email_replied', 'email_bounced', 'unsubscribed', 'call', 'task_completed'],
  state          text not null default 'active' check (state in ('active', 'paused')),
  paused_reason  text,
  prepared_at    timestamptz,
  lease_owner    text,
  lease_until    timestamptz,
  created_at     timestamptz not null default now()
);
create unique index crm_connection_kind on crm_connection (workspace_id, kind);

create table crm_activity (
  id               bigserial primary key,
  connection_id    uuid not null references crm_connection(id) on delete cascade,
  workspace_id     uuid not null,
  external_id      text not null,
  kind             text not null,
  -- An erased lead's activities that are not written yet go with it.
  lead_id          uuid references lead(id) on delete cascade,
  email            text not null,
  payload          jsonb not null,
  occurred_at      timestamptz not null,
  state            text not null default 'pending' check (state in ('pending', 'written', 'skipped', 'rejected')),
  attempts         integer not null default 0,
  next_attempt_at  timestamptz not null,
  crm_id           text,
  last_error       text,
  written_at       timestamptz,
  created_at       timestamptz not null default now()
);
create unique index crm_activity_once on crm_activity (connection_id, external_id);
create index crm_activity_due on crm_activity (connection_id, next_attempt_at) where state = 'pending';
create index crm_activity_lead on crm_activity (lead_id);

-- Sends (applied), replies, bounces and unsubscribes (even when the engine had nothing left to do:
-- the prospect still answered), from the journal.
create function crm_from_event() returns trigger language plpgsql as $$
begin
  insert into crm_activity (connection_id, workspace_id, external_id, kind, lead_id, email, payload, occurred_at, next_attempt_at)
  select c.id, n.workspace_id, 'cadenza:event:' || n.id, t.kind, l.id, l.email,
         jsonb_build_object('enrollmentId', n.enrollment_id, 'sequenceId', e.sequence_id, 'detail', n.payload -> 'event'),
         n.at, n.at
  from new_rows n
  join lateral (select case split_part(n.type, '.', 1)
                  when 'reply' then 'email_replied' when 'bounce' then 'email_bounced' when 'unsubscribe' then 'unsubscribed'
                  when 'step_sent' then case when n.type = 'step_sent' then 'email_sent' end
                end as kind) t on t.kind is not null
  join crm_connection c on c.workspace_id = n.workspace_id and t.kind = any (c.activities)
  join enrollment e on e.id = n.enrollment_id
  join lead l on l.id = e.lead_id
  on conflict do nothing;
  return null;
end $$;
create trigger crm_event after insert on event referencing new table as new_rows
  for each statement execute function crm_from_event();

-- Opens and clicks; an open by an image proxy is written flagged automatic, a link scanner's click
-- is not a person's and is left out (as for webhooks).
create function crm_from_tracking() returns trigger language plpgsql as $$
begin
  insert into crm_activity (connection_id, workspace_id, external_id, kind, lead_id, email, payload, occurred_at, next_attempt_at)
  select c.id, n.workspace_id, 'cadenza:tracking:' || n.id, t.kind, l.id, l.email,
         jsonb_build_object('enrollmentId', n.enrollment_id, 'sequenceId', e.sequence_id, 'sendRequestId', n.send_request_id,
                            'url', n.url, 'verdict', n.verdict),
         n.at, n.at
  from new_rows n
  join lateral (select case n.kind when 'open' then 'email_opened' when 'click' then 'email_clicked' end as kind) t on t.kind is not null
  join crm_connection c on c.workspace_id = n.workspace_id and t.kind = any (c.activities)
  join enrollment e on e.id = n.enrollment_id
  join lead l on l.id = e.lead_id
  where n.verdict is distinct from 'scanner'
  on conflict do nothing;
  return null;
end $$;
create trigger crm_tracking after insert on tracking_event referencing new table as new_rows
  for each statement execute function crm_from_tracking();

-- A manual task completed (a call task's call is the call's activity, below). Row triggers with a
-- column list and a condition: a task or call row is updated often (heartbeats, notes), and only
-- this change is an activity.
create function crm_from_task() returns trigger language plpgsql as $$
begin
  insert into crm_activity (connection_id, workspace_id, external_id, kind, lead_id, email, payload, occurred_at, next_attempt_at)
  select c.id, new.workspace_id, 'cadenza:task:' || new.id, 'task_completed', l.id, l.email,
         jsonb_build_object('enrollmentId', new.enrollment_id, 'sequenceId', e.sequence_id, 'title', new.title, 'notes', new.notes, 'outcome', new.outcome),
         coalesce(new.completed_at, now()), coalesce(new.completed_at, now())
  from crm_connection c
  join enrollment e on e.id = new.enrollment_id
  join lead l on l.id = e.lead_id
  where c.workspace_id = new.workspace_id and 'task_completed' = any (c.activities)
  on conflict do nothing;
  return null;
end $$;
create trigger crm_task after update of state on task
  for each row when (new.kind = 'manual' and new.state = 'done' and old.state is distinct from 'done')
  execute function crm_from_task();

-- A call, once its outcome is given (by the rep, or by the sweep), when it has a lead.
create function crm_from_phone_call() returns trigger language plpgsql as $$
begin
  insert into crm_activity (connection_id, workspace_id, external_id, kind, lead_id, email, payload, occurred_at, next_attempt_at)
  select c.id, new.workspace_id, 'cadenza:call:' || new.id, 'call', l.id, l.email,
         jsonb_build_object('callId', new.id, 'enrollmentId', new.enrollment_id, 'direction', new.direction, 'outcome', new.outcome,
                            'durationMs', new.duration_ms, 'notes', new.notes, 'remote', new.remote_e164),
         coalesce(new.ended_at, new.outcome_at, now()), coalesce(new.outcome_at, now())
  from crm_connection c
  join lead l on l.id = new.lead_id
  where c.workspace_id = new.workspace_id and 'call' = any (c.activities)
  on conflict do nothing;
  return null;
end $$;
create trigger crm_phone_call after update of outcome on phone_call
  for each row when (old.outcome is null and new.outcome is not null)
  execute function crm_from_phone_call();
