-- Privacy (issue 15, src/privacy/): retention, subject access export, erasure.
--
-- Erasure keeps no address: the person's row in the suppression list is replaced by a keyed hash
-- of the normalised address ('erased:' and the hex HMAC, src/common/erasure-key.ts) with the
-- reason 'erased', so a later import or lead of the same address is refused although the address
-- itself is gone. The key is derived from the master key and never stored here.
alter table suppression drop constraint suppression_reason_check;
alter table suppression add constraint suppression_reason_check
  check (reason in ('hard_bounce', 'unsubscribe', 'complaint', 'manual', 'erased'));

-- The nightly purge (src/privacy/purge-role.ts): one row per UTC day it completed, so a day is
-- purged once whichever process holds the lease, and operators can read when it last ran.
create table privacy_purge_day (
  day          date primary key,
  started_at   timestamptz not null,
  finished_at  timestamptz not null,
  -- Rows deleted or cleared per kind ({"message_bodies": 120, "events": 4000, …}).
  counts       jsonb not null default '{}'
);

-- The purge deletes by workspace and age in bounded batches; these keep each batch an index range
-- instead of a scan of the table (message's own indexes are by mailbox or inbound only).
create index message_workspace_at on message (workspace_id, at);
create index webhook_delivery_workspace_created on webhook_delivery (workspace_id, created_at) where state <> 'pending';
create index quarantine_workspace_at on quarantine (workspace_id, at);
