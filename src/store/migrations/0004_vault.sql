-- Envelope encryption of credentials (promise 7): each workspace has a data key, stored only
-- wrapped (encrypted) by the master key, which never enters the database. Credentials are
-- encrypted with the workspace's data key.
create table workspace_key (
  workspace_id        uuid primary key references workspace(id) on delete cascade,
  wrapped_key         bytea not null,
  master_fingerprint  text not null,
  created_at          timestamptz not null default now(),
  rotated_at          timestamptz
);

create table mailbox_credential (
  mailbox_id   uuid primary key references mailbox(id) on delete cascade,
  kind         text not null check (kind in ('password', 'oauth')),
  ciphertext   bytea not null,
  updated_at   timestamptz not null default now()
);
