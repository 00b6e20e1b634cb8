-- Calls (the dialer issue): one row per call a rep places or takes, written before the phone rings
-- so that every call has a record whatever happens to the browser or the media relay after it
-- (src/dialer/). The softphone reports its progress; the rep gives the outcome on hang-up, which
-- is an event to the call task's enrollment (src/sequence/task-outcome.ts).
--   direction   'outbound' (a rep dialled) or 'inbound' (a lead called; lead_id matched by number)
--   source      'dialer' (placed through Cadenza's softphone) or 'logged' (a rep dialled elsewhere
--               and logged the outcome on the task)
--   state       dialing → ringing → answered → ended; a call may end from any of them
--   outcome     what the rep says happened; 'dropped' when the call ended abnormally (the relay or
--               the browser died) or went silent: a dropped call moves no sequence, its task stays open
--   suggested   what the end suggests (busy from a 486, no_answer from a timeout, connected once
--               answered); given as the outcome when the rep gives none in time (call-sweep.ts)
--   attempt     which try of its task this call was (the step's retry rule counts them)
create table phone_call (
  id             uuid primary key,
  workspace_id   uuid not null references workspace(id) on delete cascade,
  -- An erased lead's calls go with it (their number and notes are the lead's personal data).
  lead_id        uuid references lead(id) on delete cascade,
  task_id        uuid references task(id) on delete set null,
  enrollment_id  uuid references enrollment(id) on delete set null,
  placed_by      uuid references app_user(id) on delete set null,
  direction      text not null check (direction in ('outbound', 'inbound')),
  source         text not null check (source in ('dialer', 'logged')),
  remote_e164    text,
  state          text not null default 'dialing' check (state in ('dialing', 'ringing', 'answered', 'ended')),
  outcome        text check (outcome in ('connected', 'voicemail', 'no_answer', 'busy', 'wrong_number', 'meeting_booked', 'not_interested', 'dropped')),
  suggested      text check (suggested in ('connected', 'no_answer', 'busy', 'dropped')),
  notes          text,
  sip_call_id    text,
  end_cause      text,
  attempt        integer not null default 1 check (attempt >= 1),
  ringing_at     timestamptz,
  answered_at    timestamptz,
  ended_at       timestamptz,
  duration_ms    integer check (duration_ms >= 0),
  outcome_at     timestamptz,
  -- the softphone's last word (progress or heartbeat): a live call silent for long is dropped
  seen_at        timestamptz not null default now(),
  created_at     timestamptz not null default now()
);
create index phone_call_lead on phone_call (workspace_id, lead_id, created_at desc);
create index phone_call_task on phone_call (task_id) where task_id is not null;
create index phone_call_recent on phone_call (workspace_id, created_at desc);
-- The sweep's two questions: which live calls went silent, which ended calls still lack an outcome.
create index phone_call_live on phone_call (seen_at) where state <> 'ended';
create index phone_call_unlogged on phone_call (ended_at) where state = 'ended' and outcome is null;

-- How many calls were logged on a call task: the step's retry rule counts tries by it.
alter table task add column attempts integer not null default 0;

-- 'call.logged': a call's outcome was given (by the rep, or by the sweep), once per call.
create function webhook_from_phone_call() returns trigger language plpgsql as $$
begin
  insert into webhook_delivery (endpoint_id, workspace_id, event_id, event_type, payload, next_attempt_at)
  select w.id, new.workspace_id, 'call:' || new.id, 'call.logged',
         jsonb_build_object('callId', new.id, 'leadId', new.lead_id, 'email', l.email, 'taskId', new.task_id, 'enrollmentId', new.enrollment_id,
                            'direction', new.direction, 'outcome', new.outcome, 'durationMs', new.duration_ms, 'notes', new.notes,
                            'startedAt', new.created_at, 'endedAt', new.ended_at, 'attempt', new.attempt),
         new.outcome_at
  from webhook_endpoint w
  left join lead l on l.id = new.lead_id
  where w.workspace_id = new.workspace_id and w.disabled_at is null and 'call.logged' = any (w.events)
  on conflict do nothing;
  return null;
end $$;
create trigger webhook_phone_call after update of outcome on phone_call
  for each row when (old.outcome is distinct from new.outcome and new.outcome is not null and new.outcome <> 'dropped')
  execute function webhook_from_phone_call();
