-- OAuth 2 authorization flows in progress (src/mailbox/oauth). A row lives from the redirect to
-- the provider until the callback consumes it (used_at, single use) or it expires. The state is
-- what the provider hands back; the PKCE verifier and the nonce stay on the server, so a stolen
-- authorization code cannot be redeemed without them. Rows are purged shortly after expiry.
create table oauth_flow (
  state          text primary key,
  workspace_id   uuid not null references workspace(id) on delete cascade,
  provider       text not null check (provider in ('google', 'microsoft')),
  mode           text not null check (mode in ('api', 'imap')),
  redirect_uri   text not null,
  code_verifier  text not null,
  nonce          text not null,
  login_hint     text,
  created_at     timestamptz not null default now(),
  expires_at     timestamptz not null,
  used_at        timestamptz
);
create index oauth_flow_expires on oauth_flow (expires_at);
