-- Two changes to the analytics rollup (src/ops/figure-rollup.ts), both for the Analytics screen at
-- 1M enrollments (docs/benchmarks.md):
--
-- 1. Level 'z', the best send hours (src/ops/figures-send-hours.ts): each email sent, and each reply
--    credited to the email it answers, counted at the time that email went out, by the hour of the
--    week it was in the prospect's zone then (`local_hour`, 0 … 167: ISO weekday − 1 × 24 + hour).
--    The prospect's zone is not a column of the journal, so without this the route joined every
--    send of its window to its enrollment. Journal buckets are dropped and the journal folded
--    again from the start by the API's next minute, so the history has the new level too (reads
--    stay exact meanwhile: they count the source rows past the fold).
--
-- 2. The reads from the index alone: every column a read takes is in the index, so a window's tens
--    of thousands of buckets are read without visiting the table (figure_bucket is written once
--    per fold and never updated, so the visibility map autovacuum keeps lets almost every row skip
--    the heap). Replaces figure_bucket_read (same key).
alter table figure_bucket add column local_hour smallint;
alter table figure_bucket drop constraint figure_bucket_level_check;
alter table figure_bucket add constraint figure_bucket_level_check check (level in ('w', 's', 'x', 'z'));
delete from figure_bucket where source = 'journal';
update figure_fold set folded_through = 0 where source = 'journal';
create index figure_bucket_cover on figure_bucket (workspace_id, level, width, bucket)
  include (series, n, source, through, sequence_id, step_id, variant_id, mailbox_id, local_hour);
drop index figure_bucket_read;
