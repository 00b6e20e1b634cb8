-- Call recording (the dialer issue, src/dialer/recording/): where a workspace allows it
-- (settings.callRecording), rtpengine records the call's RTP to a pcap, and the API role's ingester
-- turns it into a 2-channel WAV (the rep, the prospect) sealed with the workspace's data key
-- (mailbox/vault.ts, context 'recording:<call id>'), then deletes the spool files. Retention:
-- settings.callRecordingRetentionDays, purged by the same ingester's job.
create table phone_call_recording (
  -- One recording per call; it goes with its call (and so with an erased lead, 0049's cascade).
  call_id       uuid primary key references phone_call(id) on delete cascade,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  sealed        bytea not null,
  duration_ms   integer not null check (duration_ms >= 0),
  -- The WAV's size before sealing: the web app shows it, operators size the database by it.
  bytes         integer not null check (bytes >= 0),
  -- Whether the consent announcement is in the stored audio (a server without the file records none).
  announced     boolean not null,
  created_at    timestamptz not null default now()
);
-- The retention purge deletes by workspace and age.
create index phone_call_recording_age on phone_call_recording (workspace_id, created_at);

-- Captures that could not become a recording (bad or cut pcap, no matching call, another codec,
-- the workspace's recording turned off meanwhile): the reason only. The pcap itself is deleted,
-- since it is a call's audio nobody may play.
create table call_capture_quarantine (
  id            bigserial primary key,
  sip_call_id   text not null,
  workspace_id  uuid references workspace(id) on delete cascade,
  call_id       uuid references phone_call(id) on delete set null,
  reason        text not null,
  message       text not null,
  at            timestamptz not null default now()
);
create index call_capture_quarantine_at on call_capture_quarantine (at);
