-- Least privilege between the role processes (docs/security.md "Database connections"). The
-- grants themselves name database roles, which belong to the cluster, not to this schema: they
-- are made by `cadenza db grants`, run by the superuser. What must live in the schema is here.

-- Event partitions are created while the roles run (store/partitions.ts), and only a table's
-- owner may add a partition to it. This function, run with its owner's rights, does that one
-- thing: the partition of the month that holds `month_start`, named and bounded here (nothing of
-- the caller's reaches the DDL but an instant). EXECUTE is granted by `cadenza db grants`.
create or replace function cadenza_create_event_partition(month_start timestamptz) returns text
language plpgsql security definer
set search_path from current
set timezone = 'UTC'
as $$
declare
  from_at timestamptz := date_trunc('month', month_start);
  to_at timestamptz := date_trunc('month', month_start) + interval '1 month';
  name text := 'event_' || to_char(date_trunc('month', month_start), 'YYYY_MM');
begin
  execute format('create table if not exists %I partition of event for values from (%L) to (%L)', name, from_at, to_at);
  return name;
end
$$;
revoke all on function cadenza_create_event_partition(timestamptz) from public;

-- Only the sender marks a send request sent, or possibly sent (promise 1 has one owner: the
-- outbox's mark-sent, sending/outbox.ts). Column grants cannot say
-- "this value only", so a trigger does, once the least-privilege roles exist (cadenza_sender made
-- by `cadenza db grants`): the table's owner (migrations, the embedded store, a one-role
-- installation) and members of cadenza_sender pass; any other role gets permission denied.
create or replace function send_request_sent_by_sender() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'UPDATE' and old.state = new.state then
    return new;
  end if;
  if pg_has_role(current_user, (select relowner from pg_class where oid = tg_relid), 'MEMBER') then
    return new;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'cadenza_sender') then
    return new;
  end if;
  if pg_has_role(current_user, 'cadenza_sender', 'MEMBER') then
    return new;
  end if;
  raise exception 'permission denied: only the sender role (cadenza_sender) may mark a send request %, and this session is %', new.state, current_user
    using errcode = 'insufficient_privilege';
end
$$;
create trigger send_request_sent_by_sender before insert or update of state on send_request
  for each row when (new.state in ('sent', 'possibly_sent')) execute function send_request_sent_by_sender();
