-- The analytics reads of the rollup (src/ops/figure-rollup.ts windowFacts) from the index alone:
-- every column a read takes is in the index, so a window's tens of thousands of buckets are read
-- without visiting the table (figure_bucket is written once per fold and never updated, so the
-- visibility map autovacuum keeps lets almost every row skip the heap). At 1M enrollments the
-- 90-day headline's bucket read went from 245 ms to under 100 ms (docs/benchmarks.md). Replaces
-- figure_bucket_read (same key).
create index figure_bucket_cover on figure_bucket (workspace_id, level, width, bucket)
  include (series, n, source, through, sequence_id, step_id, variant_id, mailbox_id);
drop index figure_bucket_read;
