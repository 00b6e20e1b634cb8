-- Identity lifecycle (issue 11, src/api/auth).
--
-- First run: until the first account exists, POST /api/setup needs a one-time token that
-- `cadenza start` prints and writes to the data folder (src/api/auth/setup-token.ts). Only its
-- SHA-256 is kept here, so every API process on one PostgreSQL accepts a token any of them
-- printed; setup deletes every row in the transaction that makes the first account.
create table setup_token (
  token_hash  text primary key,
  created_at  timestamptz not null default now()
);

-- The browsers a person signed in from (the cadenza_device cookie, src/api/auth/devices.ts): a
-- device that once gave the right password keeps its own sign-in count, so an attacker's
-- failures from elsewhere never lock the owner out of their usual browser. Only the hash is kept.
create table account_device (
  token_hash    text primary key,
  account_id    uuid not null references account(id) on delete cascade,
  created_at    timestamptz not null default now(),
  last_seen_at  timestamptz not null default now()
);
create index account_device_account on account_device (account_id);

-- Failed sign-ins are counted per (address, client): the client is `device:<hash>` for a known
-- device of the account, else `ip:<address>` (src/api/auth/login-limiter.ts). Rows from before
-- this migration count for no client in particular.
alter table login_failure add column client text not null default '';
create index login_failure_client on login_failure (email_norm, client, at);

-- Who created a key, as it read then (an address, or another key's name): the key list shows it
-- after the creator has left, when created_by is null.
alter table api_key add column created_by_label text;
