-- CRM sync (issue 17, docs/crm.md "Activities out"): a call's activity carries its recording link
-- and its transcript. Both come after the call: the recording when the ingester has turned the
-- call's capture into a WAV (seconds after the hang-up), the transcript when the transcriber is done
-- (minutes). A CRM activity is written once and never edited, so the call's activity waits for
-- them, bounded, instead of going out without them:
--
--   - logged with its outcome, an answered call of a workspace that records calls waits up to
--     2 minutes after its end for the recording;
--   - a recording that arrives releases it at once, unless it is to be transcribed: then it waits
--     up to 30 minutes after the call's end for the transcript;
--   - a transcript done (or failed for good) releases it at once.
--
-- Only an activity never claimed is moved (attempts = 0): a claimed one belongs to the writer
-- until it settles. Times derive from the call's own (its end), never from now(), so that a
-- simulated clock and the database's agree on what is due. The writer reads the recording and the
-- transcript when it claims the activity (src/crm/sql/activities.ts), whatever came by then.

-- How long the activity of a call waits for its media, from the call's end.
create function crm_call_hold(p_call_id uuid, p_ended timestamptz) returns timestamptz language sql stable as $$
  select case
    when exists (select 1 from call_transcript t where t.call_id = p_call_id and t.state in ('pending', 'running'))
      then p_ended + interval '30 minutes'
    when exists (select 1 from phone_call_recording r where r.call_id = p_call_id)
      then p_ended
    when exists (select 1 from phone_call c join workspace w on w.id = c.workspace_id
                 where c.id = p_call_id and c.answered_at is not null and c.source = 'dialer'
                   and (w.settings ->> 'callRecording') = 'true')
      then p_ended + interval '2 minutes'
    else p_ended
  end
$$;

create or replace function crm_from_phone_call() returns trigger language plpgsql as $$
begin
  insert into crm_activity (connection_id, workspace_id, external_id, kind, lead_id, email, payload, occurred_at, next_attempt_at)
  select c.id, new.workspace_id, 'cadenza:call:' || new.id, 'call', l.id, l.email,
         jsonb_build_object('callId', new.id, 'enrollmentId', new.enrollment_id, 'direction', new.direction, 'outcome', new.outcome,
                            'durationMs', new.duration_ms, 'notes', new.notes, 'remote', new.remote_e164),
         coalesce(new.ended_at, new.outcome_at, now()),
         greatest(coalesce(new.outcome_at, now()), crm_call_hold(new.id, coalesce(new.ended_at, new.outcome_at, now())))
  from crm_connection c
  join lead l on l.id = new.lead_id
  where c.workspace_id = new.workspace_id and 'call' = any (c.activities)
  on conflict do nothing;
  return null;
end $$;

-- The recording stored, or its transcript job created or finished: the call's waiting activity
-- is due when crm_call_hold now says.
create function crm_call_media_changed() returns trigger language plpgsql as $$
begin
  update crm_activity a
     set next_attempt_at = crm_call_hold(new.call_id, a.occurred_at)
   where a.external_id = 'cadenza:call:' || new.call_id
     and a.workspace_id = new.workspace_id
     and a.state = 'pending' and a.attempts = 0;
  return null;
end $$;
create trigger crm_call_recording after insert on phone_call_recording
  for each row execute function crm_call_media_changed();
create trigger crm_call_transcript after insert or update of state on call_transcript
  for each row execute function crm_call_media_changed();

-- Finding a call's activity by its external id, across the workspace's connections.
create index crm_activity_call on crm_activity (external_id) where kind = 'call';
