-- Reply times folded (src/ops/figures-reply-time.ts, issue 18): each reply's time since the email
-- it is credited to went out, and the sequence it counts for, written once by the rollup's fold
-- (src/ops/figure-rollup.ts, source 'reply_time') from the journal, instead of looked up per reply
-- at every request. At 1M enrollments those lookups (a walk of the enrollment's moves and a probe
-- of the journal's index, 3,871 replies in 30 days) were 155 of the chart's 206 ms
-- (docs/benchmarks.md). A duration is not a count, so the rows are the replies themselves, not
-- buckets; the median stays exact. Reads take the rows folded up to the fold's position and look up
-- the journal's replies past it, as the buckets' reads do.
--
-- The fold starts from the journal's beginning (folded_through 0): reads count the unfolded replies
-- from the journal meanwhile, so they are exact throughout. No personal data: a time, a duration
-- and a sequence, kept after the journal row is purged or erased, like the buckets' counts.
create table reply_time (
  event_id      bigint primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  at            timestamptz not null,
  sent_at       timestamptz,
  sequence_id   uuid
);
create index reply_time_read on reply_time (workspace_id, at) include (sent_at, sequence_id, event_id);

alter table figure_fold drop constraint figure_fold_source_check;
alter table figure_fold add constraint figure_fold_source_check check (source in ('journal', 'tracking', 'positive', 'reply_time'));
insert into figure_fold (source) values ('reply_time');
