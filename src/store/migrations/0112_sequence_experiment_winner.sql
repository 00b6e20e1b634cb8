-- Experiments (issue 18, docs/experiments.md "Automatic winner"): the winner a sequence experiment
-- declared (an experiment on the sequence, whose arms fix several steps or their timing; its
-- definition lives in sequence.settings, by key).
--
-- sequence_experiment_winner   one row per sequence experiment whose automatic winner was declared:
--                              from declared_at on, new enrollments all get arm_key
--                              (sequence/arm-view.ts joinExperiments); those enrolled before keep
--                              the arm they drew, whose due times were planned with it. Keyed by
--                              the experiment's key, its identity for life, in its own table so that
--                              applying a definition (which rewrites the settings) cannot undo it.
--   p_value, reason             the verdict that made it, for people to read
create table sequence_experiment_winner (
  sequence_id     uuid not null references sequence(id) on delete cascade,
  experiment_key  text not null,
  arm_key         text not null,
  declared_at     timestamptz not null,
  p_value         double precision not null,
  reason          text not null,
  primary key (sequence_id, experiment_key)
);
