-- 0131's trigger serialised the writers of one enrollment's positive replies with a transaction-
-- level advisory lock per enrollment. Each such lock holds a slot of PostgreSQL's shared lock table
-- until the transaction ends, so one transaction storing or deleting the interested replies of some
-- thousands of enrollments (a lead batch deleted with its replies, a bulk import) failed with "out
-- of shared memory" (src/ops/positive-fact-trigger.test.ts: 20,000 in one statement). The lock is
-- now the enrollment's row in enrollment_positive, taken FOR UPDATE: a row lock is written in the
-- row itself and takes no slot. The row is made first when missing, and it stays (first_at null:
-- no interested reply now) so that a writer waiting on it never finds it deleted under it.
alter table enrollment_positive alter column first_at drop not null;

create or replace function positive_fact_track() returns trigger language plpgsql as $$
declare
  e uuid;
  ws uuid;
  was timestamptz;
  now_at timestamptz;
begin
  foreach e in array array_remove(array[
      case when tg_op <> 'INSERT' then old.enrollment_id end,
      case when tg_op <> 'DELETE' and (tg_op = 'INSERT' or new.enrollment_id is distinct from old.enrollment_id) then new.enrollment_id end], null)
  loop
    ws := case when tg_op = 'DELETE' then old.workspace_id else new.workspace_id end;
    -- A workspace being deleted takes its messages and these rows with it: nothing to count (and a
    -- row written now would name a workspace that is gone).
    if not exists (select 1 from workspace w where w.id = ws) then
      continue;
    end if;
    -- One writer per enrollment at a time: its row is locked, and the first reply is read after the
    -- lock, on a fresh snapshot (READ COMMITTED), so two transactions relabelling replies of one
    -- enrollment write facts that add up. A concurrent first insert of the row waits for the other's
    -- commit, then finds it.
    insert into enrollment_positive (enrollment_id, workspace_id, first_at) values (e, ws, null)
      on conflict (enrollment_id) do nothing;
    select p.first_at into was from enrollment_positive p where p.enrollment_id = e for update;
    select min(coalesce(m.received_at, m.at)) into now_at from message m
      where m.enrollment_id = e and m.direction = 'inbound' and m.intent = 'interested';
    if was is distinct from now_at then
      if was is not null then
        insert into positive_fact (workspace_id, enrollment_id, at, n) values (ws, e, was, -1);
      end if;
      if now_at is not null then
        insert into positive_fact (workspace_id, enrollment_id, at, n) values (ws, e, now_at, 1);
      end if;
      update enrollment_positive set first_at = now_at where enrollment_id = e;
    end if;
  end loop;
  return null;
end $$;
