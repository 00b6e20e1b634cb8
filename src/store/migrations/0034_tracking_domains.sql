-- Custom tracking domains with certificates issued on demand by ACME (src/tracking/domains/).
-- One host per workspace; a host belongs to one workspace. The certificate and its private key
-- are sealed with the workspace's data key, bound to the host (the vault's envelope encryption),
-- so a database dump reveals no key and a sealed pair copied onto another host does not open.
create table tracking_domain (
  workspace_id     uuid primary key references workspace(id) on delete cascade,
  host             text not null unique,
  -- pending_dns -> issuing -> active -> renewing -> active; any of them -> failed (reason says why)
  state            text not null check (state in ('pending_dns', 'issuing', 'active', 'renewing', 'failed')),
  reason           text,
  -- failures in a row, for the back-off; 0 after a success
  attempts         integer not null default 0,
  -- when the job looks at this host next (verify, issue, renew, or try again)
  next_attempt_at  timestamptz not null,
  sealed_cert      bytea,
  not_before       timestamptz,
  not_after        timestamptz,
  -- grows with each certificate, so listeners swap theirs only when it changed
  cert_version     integer not null default 0,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now()
);
create index tracking_domain_next on tracking_domain (next_attempt_at);

-- The installation's ACME account per directory: its key wrapped by the master key.
create table acme_account (
  directory_url  text primary key,
  wrapped_key    bytea not null,
  account_url    text,
  created_at     timestamptz not null default now()
);

-- HTTP-01 challenges in flight: any API process may be the one the CA reaches.
create table acme_challenge (
  token              text primary key,
  key_authorization  text not null,
  host               text not null,
  expires_at         timestamptz not null
);
