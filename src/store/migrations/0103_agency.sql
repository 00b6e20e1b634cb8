-- Agencies (issue 19, docs/security.md "Agencies"): an agency workspace owns client workspaces.
-- The agency's admins and owners reach its clients as admins without a membership there
-- (src/api/auth/agency.ts); a client's own people never reach the agency or a sibling client.
-- One level only: a client workspace cannot itself own clients (checked by the API).
alter table workspace add column agency_id uuid references workspace(id) on delete restrict;
create index workspace_agency on workspace (agency_id) where agency_id is not null;

-- The client portal's read-only role: reports of the workspace, nothing else (rank below member).
alter table app_user drop constraint app_user_role_check;
alter table app_user add constraint app_user_role_check check (role in ('owner', 'admin', 'member', 'viewer'));
alter table invitation drop constraint invitation_role_check;
alter table invitation add constraint invitation_role_check check (role in ('owner', 'admin', 'member', 'viewer'));

-- White-label branding of a client workspace: what the web app shows before and after sign-in
-- on the client's own domain. The logo is kept here (small, type-checked on upload) and served
-- by the app; the domain itself is a tracking_domain row of purpose 'app' (below), so it gets
-- its certificate from the same ACME job and HTTPS listener as custom tracking hosts.
create table workspace_branding (
  workspace_id   uuid primary key references workspace(id) on delete cascade,
  display_name   text not null,
  primary_color  text not null check (primary_color ~ '^#[0-9a-f]{6}$'),
  accent_color   text not null check (accent_color ~ '^#[0-9a-f]{6}$'),
  logo           bytea,
  logo_type      text check (logo_type in ('image/png', 'image/jpeg', 'image/webp')),
  logo_version   integer not null default 0,
  updated_at     timestamptz not null default now()
);

-- A workspace may have a tracking host and an app host; each host still belongs to one workspace.
alter table tracking_domain add column purpose text not null default 'tracking' check (purpose in ('tracking', 'app'));
alter table tracking_domain drop constraint tracking_domain_pkey;
alter table tracking_domain add primary key (workspace_id, purpose);
