-- Leases with fencing tokens: one owner at a time for each resource (a mailbox's sender, a
-- mailbox's sync). The token grows at every change of owner, so a process that lost its lease
-- (paused, partitioned) and wakes up can be refused by any write that checks its token.
create sequence lease_token_seq;

create table lease (
  resource     text primary key,
  owner        text not null,
  token        bigint not null,
  expires_at   timestamptz not null,
  acquired_at  timestamptz not null,
  renewed_at   timestamptz not null
);
create index lease_owner on lease (owner);
