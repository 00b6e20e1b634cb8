-- Compaction of the analytics rollup (src/ops/figure-rollup.ts compactFigures).
--
-- A fold adds one row per bucket it touches, and the API folds every minute: without compaction a
-- month bucket of a busy workspace gains a row per key every minute (43,200 a month), and the long
-- spans the day and month widths exist for read them all. Compaction merges each bucket's rows
-- into one, for the buckets touched since it last ran (`compacted_through`), found by `through`.
alter table figure_fold add column compacted_through bigint not null default 0;
create index figure_bucket_through on figure_bucket (source, through);
