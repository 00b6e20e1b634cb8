-- Two more levels of the analytics rollup (src/ops/figure-rollup.ts), each level 'x' summed over
-- fewer keys, for the reads that need no more (docs/benchmarks.md, 1M enrollments):
--   v  per sequence, step and variant, in 15-minute, hour, UTC day and UTC month buckets: the
--      funnel, the variants, the breakdowns by sequence, step and variant;
--   b  per mailbox alone, in the same widths: the breakdowns by mailbox and rep, and each
--      mailbox's days.
-- Both are derived here from level 'x', which holds the same facts, row by row of each fold
-- (`through` kept), so reads stay exact across the upgrade; folds write them from now on.
alter table figure_bucket drop constraint figure_bucket_level_check;
alter table figure_bucket add constraint figure_bucket_level_check check (level in ('w', 's', 'x', 'z', 'v', 'b'));

insert into figure_bucket (workspace_id, level, width, bucket, series, sequence_id, step_id, variant_id, mailbox_id, n, source, through)
select workspace_id, 'v', width, bucket, series, sequence_id, step_id, variant_id, null, sum(n)::int, source, through
from figure_bucket where level = 'x'
group by workspace_id, width, bucket, series, sequence_id, step_id, variant_id, source, through
having sum(n) <> 0;

insert into figure_bucket (workspace_id, level, width, bucket, series, sequence_id, step_id, variant_id, mailbox_id, n, source, through)
select workspace_id, 'v', 'h', date_trunc('hour', bucket, 'UTC'), series, sequence_id, step_id, variant_id, null, sum(n)::int, source, through
from figure_bucket where level = 'x' and width = 'q'
group by workspace_id, 4, series, sequence_id, step_id, variant_id, source, through
having sum(n) <> 0;

insert into figure_bucket (workspace_id, level, width, bucket, series, sequence_id, step_id, variant_id, mailbox_id, n, source, through)
select workspace_id, 'b', w.width, case w.width when 'h' then date_trunc('hour', x.bucket, 'UTC') else x.bucket end, series, null, null, null, mailbox_id, sum(n)::int, source, through
from figure_bucket x cross join (values ('q'), ('h')) as w(width)
where x.level = 'x' and x.width = 'q'
group by workspace_id, 3, 4, series, mailbox_id, source, through
having sum(n) <> 0;

insert into figure_bucket (workspace_id, level, width, bucket, series, sequence_id, step_id, variant_id, mailbox_id, n, source, through)
select workspace_id, 'b', width, bucket, series, null, null, null, mailbox_id, sum(n)::int, source, through
from figure_bucket where level = 'x' and width in ('d', 'm')
group by workspace_id, width, bucket, series, mailbox_id, source, through
having sum(n) <> 0;
