-- Positive replies folded into the analytics rollup (src/ops/figure-rollup.ts), as a third source.
--
-- A positive reply is an enrollment's first reply classified `interested`, at its receipt
-- (src/ops/figures.ts). They were read from `message` on every request, because a person may
-- relabel a reply, and at 1M enrollments crediting each one to its email was most of a breakdown's
-- time (docs/benchmarks.md). Now every change that moves an enrollment's first interested reply
-- (a reply stored, relabelled, moved to another enrollment, deleted) appends to a journal of its
-- own: -1 at the time the enrollment counted until then, +1 at the time it counts from now. A
-- window's sum of these is the number of enrollments whose first interested reply is in it, so
-- they fold like the journal: by id, exactly.
create table positive_fact (
  id             bigserial primary key,
  workspace_id   uuid not null references workspace(id) on delete cascade,
  -- No foreign key: the facts outlive an enrollment deleted with its lead (its replies' -1 is
  -- written as they go).
  enrollment_id  uuid not null,
  at             timestamptz not null,
  n              smallint not null check (n in (-1, 1))
);

-- Where each enrollment counts now: the time of its first interested reply (no row: none).
create table enrollment_positive (
  enrollment_id  uuid primary key,
  workspace_id   uuid not null references workspace(id) on delete cascade,
  first_at       timestamptz not null
);

-- The trigger's lookup of an enrollment's first interested reply.
create index message_enrollment_positive on message (enrollment_id, (coalesce(received_at, at)))
  where direction = 'inbound' and intent = 'interested';

create function positive_fact_track() returns trigger language plpgsql as $$
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
    -- One writer per enrollment at a time: the first reply is read after the lock, on a fresh
    -- snapshot (READ COMMITTED), so two transactions relabelling replies of one enrollment write
    -- facts that add up.
    perform pg_advisory_xact_lock(hashtextextended('positive_fact:' || e::text, 0));
    select p.first_at into was from enrollment_positive p where p.enrollment_id = e;
    select min(coalesce(m.received_at, m.at)) into now_at from message m
      where m.enrollment_id = e and m.direction = 'inbound' and m.intent = 'interested';
    if was is distinct from now_at then
      if was is not null then
        insert into positive_fact (workspace_id, enrollment_id, at, n) values (ws, e, was, -1);
      end if;
      if now_at is not null then
        insert into positive_fact (workspace_id, enrollment_id, at, n) values (ws, e, now_at, 1);
        insert into enrollment_positive (enrollment_id, workspace_id, first_at) values (e, ws, now_at)
          on conflict (enrollment_id) do update set first_at = excluded.first_at;
      else
        delete from enrollment_positive where enrollment_id = e;
      end if;
    end if;
  end loop;
  return null;
end $$;

-- Only rows that are or were interested replies of an enrollment wake it.
create trigger message_positive_insert after insert on message for each row
  when (new.direction = 'inbound' and new.intent = 'interested' and new.enrollment_id is not null)
  execute function positive_fact_track();
create trigger message_positive_update after update on message for each row
  when (((old.direction = 'inbound' and old.intent = 'interested' and old.enrollment_id is not null)
      or (new.direction = 'inbound' and new.intent = 'interested' and new.enrollment_id is not null))
    and (old.direction, old.intent, old.enrollment_id, old.received_at, old.at)
      is distinct from (new.direction, new.intent, new.enrollment_id, new.received_at, new.at))
  execute function positive_fact_track();
create trigger message_positive_delete after delete on message for each row
  when (old.direction = 'inbound' and old.intent = 'interested' and old.enrollment_id is not null)
  execute function positive_fact_track();

-- What is there already: each enrollment's first interested reply, as one +1 fact.
insert into enrollment_positive (enrollment_id, workspace_id, first_at)
  select enrollment_id, min(workspace_id::text)::uuid, min(coalesce(received_at, at)) from message
  where direction = 'inbound' and intent = 'interested' and enrollment_id is not null
  group by enrollment_id;
insert into positive_fact (workspace_id, enrollment_id, at, n)
  select workspace_id, enrollment_id, first_at, 1 from enrollment_positive order by first_at;

-- The third source of the rollup.
alter table figure_bucket drop constraint figure_bucket_source_check;
alter table figure_bucket add constraint figure_bucket_source_check check (source in ('journal', 'tracking', 'positive'));
alter table figure_fold drop constraint figure_fold_source_check;
alter table figure_fold add constraint figure_fold_source_check check (source in ('journal', 'tracking', 'positive'));
insert into figure_fold (source) values ('positive');
