-- Single sign-on with OpenID Connect (issue 19, src/api/auth/sso/, docs/security.md "Single sign-on").
--
-- One identity provider per workspace, configured by its admins:
--   issuer                the provider's issuer URL; its metadata is read by OpenID discovery
--   client_id             Cadenza's client at the provider
--   client_secret_sealed  the client secret, sealed with the workspace's data key (src/mailbox/vault.ts,
--                         context 'sso:<workspace id>'), never stored in clear nor returned
--   allowed_domains       email domains whose verified addresses join the workspace on first sign-in
--   groups_claim          the ID token claim that lists the person's groups (usually 'groups')
--   role_mapping          [{group, role}]: the first group of the list the person is in gives the role
--   default_role          the role of a newcomer in none of the mapped groups
--   password_allowed      false: members (but owners, the way back in when the provider is down)
--                         may sign in with SSO only
create table workspace_sso (
  workspace_id          uuid primary key references workspace(id) on delete cascade,
  enabled               boolean not null default true,
  issuer                text not null check (length(issuer) between 8 and 2000),
  client_id             text not null check (length(client_id) between 1 and 500),
  client_secret_sealed  bytea not null,
  allowed_domains       text[] not null default '{}',
  groups_claim          text not null default 'groups' check (length(groups_claim) between 1 and 100),
  role_mapping          jsonb not null default '[]',
  default_role          text not null default 'member' check (default_role in ('admin', 'member')),
  password_allowed      boolean not null default true,
  created_at            timestamptz not null default now(),
  updated_at            timestamptz not null default now()
);
-- A sign-in by email domain finds its workspace: one workspace per domain among the enabled ones
-- is enforced by the API (a domain is claimed once), looked up through this index.
create index workspace_sso_domains on workspace_sso using gin (allowed_domains);

-- The sign-in flows ride the OAuth flow table (0007, 0059): single use, ten minutes, bound to the
-- browser that started it (session_hash: the hash of a cookie set at start).
alter table oauth_flow drop constraint oauth_flow_provider_check;
alter table oauth_flow add constraint oauth_flow_provider_check check (provider in ('google', 'microsoft', 'hubspot', 'salesforce', 'pipedrive', 'sso'));
alter table oauth_flow drop constraint oauth_flow_mode_check;
alter table oauth_flow add constraint oauth_flow_mode_check check (mode in ('api', 'imap', 'crm', 'sso'));
