-- Ingestion (src/ingest/): the sync cursor of each mailbox, inbound mail in the unified inbox with
-- its classification and what was done about it, the review queue, and quarantined input.

-- Promise 5, "cursors are the truth": the cursor is written in the same transaction as the signals
-- derived from what it yielded, by the holder of the mailbox's sync lease (fencing token checked).
create table mailbox_sync (
  mailbox_id     uuid primary key references mailbox(id) on delete cascade,
  -- opaque, the connector's own shape (IMAP uidvalidity/uid/modseq per folder, Gmail historyId, Graph deltaLinks)
  cursor         jsonb,
  updated_at     timestamptz not null,
  last_error     text,
  last_error_at  timestamptz,
  -- full resyncs after a refused cursor (UIDVALIDITY changed, history 404, delta 410)
  resyncs        integer not null default 0,
  -- the lease token of the last writer, for forensics (the check itself is holds() on the lease)
  fence_token    bigint
);

-- Inbound mail lives in `message` beside the outbound copies, so that a thread reads from one table
-- and (mailbox_id, message_id), already unique, deduplicates a resync's re-yield and recognises a
-- copy of a message Cadenza sent. These columns are null on outbound rows.
alter table message add column folder text check (folder in ('inbox', 'junk', 'sent', 'other'));
-- the connector's key of this copy ('INBOX:<uidvalidity>:<uid>', a Gmail or Graph message id)
alter table message add column provider_key text;
-- when the server received it (IMAP INTERNALDATE has whole seconds)
alter table message add column received_at timestamptz;
alter table message add column label text;
alter table message add column confidence real check (confidence >= 0 and confidence <= 1);
alter table message add column reason text;
alter table message add column rung text;
alter table message add column intent text;
alter table message add column intent_confidence real;
-- BounceDetails for bounces, the feedback report for complaints
alter table message add column bounce jsonb;
-- an out-of-office note's stated return date, and when the enrollment resumes
alter table message add column return_at timestamptz;
-- how the message was threaded ('in_reply_to', 'references', 'provider_thread', 'subject',
-- 'bounce_message_id', 'bounce_recipient', 'none') and what was done ('reply', 'hard_bounce', ...)
alter table message add column thread_via text;
alter table message add column action text;
-- the new text of a reply (quoted history and signature removed) and the start of the body, both bounded
alter table message add column new_text text;
alter table message add column excerpt text;
alter table message add column needs_review boolean not null default false;
alter table message add column reviewed_at timestamptz;

create unique index message_mailbox_provider_key on message (mailbox_id, provider_key) where provider_key is not null;
-- Threading looks up every Message-ID an inbound message refers to in one query per batch.
create index message_workspace_msgid on message (workspace_id, message_id);
-- The unified inbox, newest first, and the review queue.
create index message_inbox on message (mailbox_id, at) where direction = 'inbound';
create index message_review on message (workspace_id, at) where needs_review and reviewed_at is null;

-- Promise 8: what could not be parsed or fetched is kept with the reason, never dropped, never a crash.
create table quarantine (
  id             uuid primary key,
  workspace_id   uuid not null references workspace(id) on delete cascade,
  mailbox_id     uuid references mailbox(id) on delete cascade,
  provider_key   text not null,
  folder         text,
  reason         text not null,
  -- the first bytes of the message (bounded: a hostile message can be huge), null when never fetched
  raw            bytea,
  raw_size       integer,
  at             timestamptz not null,
  resolved_at    timestamptz
);
create unique index quarantine_key on quarantine (mailbox_id, provider_key);
