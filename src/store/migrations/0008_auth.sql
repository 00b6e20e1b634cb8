-- Signing in (src/api/auth). A person is an `account` (email + argon2id password hash); what they
-- may do in a workspace is their `app_user` row there (the membership: role, and whose inbox they
-- read). 0001's app_user stays the workspace's view of a person, so mailbox.user_id keeps its
-- meaning; account_id links it to a login. A person may belong to several workspaces.

create table account (
  id             uuid primary key,
  email          text not null,
  name           text,
  password_hash  text not null,
  created_at     timestamptz not null default now()
);
create unique index account_email on account (lower(email));

alter table app_user add column account_id uuid references account(id) on delete cascade;
create unique index app_user_account on app_user (account_id, workspace_id);
-- A member reads the inbox of their own mailboxes only, unless an admin grants 'all'.
alter table app_user add column inbox_scope text not null default 'own' check (inbox_scope in ('own', 'all'));

-- Server-side sessions. The cookie holds a random token; only its SHA-256 is stored, so a copy of
-- the database does not let anyone sign in. csrf_token is sent back in x-csrf-token on unsafe calls.
create table auth_session (
  id_hash       text primary key,
  account_id    uuid not null references account(id) on delete cascade,
  csrf_token    text not null,
  created_at    timestamptz not null default now(),
  expires_at    timestamptz not null
);
create index auth_session_account on auth_session (account_id);
create index auth_session_expiry on auth_session (expires_at);

-- API keys for scripts, one workspace each. Shown once at creation; only the hash is kept.
create table api_key (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  name          text not null,
  -- the first characters of the key, so a person can tell their keys apart in a list
  prefix        text not null,
  key_hash      text not null,
  role          text not null check (role in ('admin', 'member')),
  created_by    uuid references app_user(id) on delete set null,
  created_at    timestamptz not null default now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
create unique index api_key_hash on api_key (key_hash);
create index api_key_workspace on api_key (workspace_id, created_at);

-- Failed sign-ins per address, for the per-email limit (the per-IP limit is in memory).
create table login_failure (
  email_norm  text not null,
  at          timestamptz not null
);
create index login_failure_email on login_failure (email_norm, at);
