-- The analytics facts folded into buckets (src/ops/figure-rollup.ts), so that a window's figures
-- read a few thousand rows instead of every journal entry and tracking event in it.
--
-- Each fold adds the counts (deltas) of the journal entries and tracking events whose id is past
-- the last fold and at or below a bound every writer has committed (figure_fold); a read sums the
-- buckets of its window and counts the rows past the bound itself, in the same statement, so the
-- figures are exact at every moment. Buckets are the fact's time floored to 15 minutes (every time
-- zone's midnight is on one), an hour, a UTC day or a UTC month; `level` says which facts a row sums:
--   w  the workspace's, per series, 15-minute and hour buckets;
--   s  one sequence's, per series, 15-minute and hour buckets;
--   x  per sequence and the email each fact is credited to (step, variant, mailbox), in all three widths.
create table figure_bucket (
  workspace_id  uuid not null references workspace(id) on delete cascade,
  level         text not null check (level in ('w', 's', 'x')),
  width         text not null check (width in ('q', 'h', 'd', 'm')),
  bucket        timestamptz not null,
  series        text not null,
  sequence_id   uuid,
  step_id       uuid,
  variant_id    uuid,
  mailbox_id    uuid,
  n             integer not null,
  -- The source and the fold that added the row (its folded_through): a read takes the rows of
  -- folds up to the position it read, and the source rows past it, so a fold committed while it
  -- runs is counted once.
  source        text not null check (source in ('journal', 'tracking')),
  through       bigint not null
);
create index figure_bucket_read on figure_bucket (workspace_id, level, width, bucket);
-- One sequence's figures (the Analytics screen's sequence picker).
create index figure_bucket_sequence on figure_bucket (workspace_id, sequence_id, level, width, bucket) where sequence_id is not null;

-- How far each source is folded: every row with id <= folded_through is in figure_bucket.
create table figure_fold (
  source          text primary key check (source in ('journal', 'tracking')),
  folded_through  bigint not null default 0
);
insert into figure_fold (source) values ('journal'), ('tracking');

-- The rows past the fold, found by id (the journal's primary key leads with `at`).
create index event_id on event (id);

-- Reads that stay on the source tables, by the server's receipt: interested replies (a person may
-- relabel a reply, so they are never folded) and the reply-to-stop latencies.
create index message_positive_reply on message (workspace_id, (coalesce(received_at, at)))
  where direction = 'inbound' and intent = 'interested' and enrollment_id is not null;
create index message_stop_latency on message (workspace_id, (coalesce(received_at, at)))
  where direction = 'inbound' and stop_latency_ms is not null;
-- A mailbox's bounces in a window (its health on the Analytics screen).
create index send_request_mailbox_bounced on send_request (mailbox_id, bounced_at) where bounced_at is not null;
