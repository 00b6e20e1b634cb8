-- A lead import that enrolls what it wrote (issue 5: "then enroll into sequence"). The leads each
-- batch inserted or updated are enrolled in the same transaction that commits the batch's counts,
-- through the one enroll path (suppression and one enrollment per sequence checked there), so the
-- counts below always match the enrollments written.
alter table lead_import add column enroll_sequence_id uuid references sequence(id) on delete set null;
alter table lead_import add column enrolled integer not null default 0;
-- Leads written but not enrolled (already in the sequence, suppressed meanwhile, cannot be planned…).
alter table lead_import add column enroll_skipped integer not null default 0;
alter table lead_import add column enroll_skipped_by_reason jsonb not null default '{}';
