-- Experiments (issue 18, src/experiments/, docs/experiments.md): the winner an experiment declared.
--
-- experiment_winner   one row per experiment (an email step with variants) whose automatic winner
--                     was declared: from declared_at on, new enrollments all get variant_id
--                     (experiments/assignment.ts armFor); those enrolled before keep the arm the hash
--                     gave them. Its own table and not the step's config: applying a definition
--                     rewrites the config, and an edit must not undo a decision the data made.
--   p_value, reason   the verdict that made it (the always-valid p-value and why), for people to read
create table experiment_winner (
  step_id      uuid primary key references step(id) on delete cascade,
  variant_id   uuid not null references variant(id) on delete cascade,
  declared_at  timestamptz not null,
  p_value      double precision not null,
  reason       text not null
);
