-- Voicemail drop (the dialer issue): each rep records one message once and drops it into a call
-- that reached a voicemail greeting (src/dialer/voicemail.ts, docs/dialer.md "Voicemail drop").
-- One row per rep per workspace (app_user is the membership): removing the member from the
-- workspace deletes their voice with it, and so does deleting the workspace.
--   audio        the clip as uploaded, sealed with the workspace's data key (src/mailbox/vault.ts,
--                AES-256-GCM bound to 'voicemail:<user id>'): a rep's voice is personal data, and a
--                database dump alone must not play it.
--   mime_type    what the browser recorded or the rep uploaded (audio/webm, audio/ogg, audio/wav,
--                audio/mpeg), checked against the bytes' signature at upload
--   duration_ms  the clip's length: read from the header for WAV, as the browser measured it for
--                the compressed types (capped at upload either way)
--   bytes        the clip's size before sealing
create table rep_voicemail (
  user_id       uuid primary key references app_user(id) on delete cascade,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  audio         bytea not null,
  mime_type     text not null,
  duration_ms   integer not null check (duration_ms > 0),
  bytes         integer not null check (bytes > 0),
  updated_at    timestamptz not null default now()
);
create index rep_voicemail_workspace on rep_voicemail (workspace_id);
