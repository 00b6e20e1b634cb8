-- Call transcription's queue and its results (the dialer issue, src/dialer/transcribe/queue.ts):
-- one row per recorded call, written in the same transaction as the recording when this server
-- transcribes (CADENZA_TRANSCRIPTION_MODEL), so a stored recording is never without its job; the
-- call record itself never waits for it.
--   state          pending -> running -> done, or back to pending with a later next_attempt_at
--                  (a retryable failure), or failed (a recording that cannot be transcribed, the
--                  last attempt failed, or the transcriber stopped mid-job too often)
--   attempts       claims so far; a claim counts before the work, so a job that kills its
--                  process still reaches the limit
--   lease_owner, lease_until
--                  the worker that claimed it and until when; a running job whose lease ran out
--                  (its process died) is claimed again
--   transcript     words with times and speaker turns as JSON, sealed with the workspace's data
--                  key (src/mailbox/vault.ts, context 'transcript:<call id>'): what the prospect
--                  said is personal data as much as the audio is
--   error_code, error_message
--                  the last failure in plain words, shown in the web app
-- It belongs to the recording: deleting the recording (by hand, its retention, the lead's
-- erasure through the call) deletes its transcript.
create table call_transcript (
  call_id          uuid primary key references phone_call_recording(call_id) on delete cascade,
  workspace_id     uuid not null references workspace(id) on delete cascade,
  state            text not null default 'pending' check (state in ('pending', 'running', 'done', 'failed')),
  attempts         integer not null default 0 check (attempts >= 0),
  next_attempt_at  timestamptz not null default now(),
  lease_owner      text,
  lease_until      timestamptz,
  transcript       bytea,
  model            text,
  word_count       integer,
  error_code       text,
  error_message    text,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  check ((state = 'done') = (transcript is not null))
);
-- The worker's claim: due pending jobs, and running ones whose lease ran out.
create index call_transcript_due on call_transcript (next_attempt_at) where state in ('pending', 'running');
