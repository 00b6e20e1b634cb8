-- The analytics rollup's journal facts now credit a fact on a moved enrollment to the email last
-- sent along moved_to (ops/figure-facts.ts emailCredit), not to the enrollment it moved to. Buckets
-- folded under the old rule are dropped and the journal folded again from the start by the API's
-- next minute (reads stay exact meanwhile: they count the source rows past the fold). Tracking
-- facts are credited to their own email and keep their buckets.
delete from figure_bucket where source = 'journal';
update figure_fold set folded_through = 0 where source = 'journal';
