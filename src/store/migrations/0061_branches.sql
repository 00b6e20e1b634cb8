-- Branching sequences (issue 18): a step of kind 'branch' chooses one of its arms when it comes
-- due; the arms' steps are ordinary steps after it (their config names the branch and arm). The
-- enrollment records the arm it took at each branch, once, by branch step id: the edit rule
-- (sequence/plan.ts) then skips the steps of every other arm, so no enrollment runs two arms.
alter table step drop constraint step_kind_check;
alter table step add constraint step_kind_check check (kind in ('email', 'call', 'manual', 'wait', 'branch'));
alter table enrollment add column branch_choices jsonb not null default '{}';
