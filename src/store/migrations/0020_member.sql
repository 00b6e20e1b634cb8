-- Membership: one row per running pool (a process's sender pool, its sync pool), renewed every few
-- seconds. It answers two questions the lease table cannot: how many processes share a role (a
-- process that holds no lease yet still counts, so the others give it its share), and whether a
-- lease's owner is gone (its heartbeat stopped, or, on the same host, its process is provably dead),
-- so that its leases are taken over at once instead of after their TTL. The id is the lease owner.
create table member (
  id            text primary key,
  role          text not null,
  host          text not null,
  pid           integer not null,
  -- What makes "same host, pid gone" a proof: the kernel's boot id and pid namespace (the pid means
  -- the same process only within both), and the process's start time in clock ticks since boot
  -- (a pid reused by a later process has a later start).
  boot_id       text,
  pid_ns        text,
  start_ticks   bigint,
  joined_at     timestamptz not null,
  heartbeat_at  timestamptz not null
);
create index member_role on member (role, heartbeat_at);
