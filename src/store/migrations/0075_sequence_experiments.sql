-- Sequence experiments (issue 18): an experiment declared on the sequence, whose arms fix choices
-- on several steps and may differ in timing (a step's delay, its send hours, the order of steps).
-- Its definition lives in sequence.settings (by step key); the arm each enrollment runs is chosen
-- once, at enrollment, and kept here by experiment key (experiments/arm-view.ts), so no retry,
-- restart or edit moves an enrollment to another arm.
alter table enrollment add column experiment_arms jsonb not null default '{}';
