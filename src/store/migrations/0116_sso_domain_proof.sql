-- Proof that a workspace owns an email domain it admits to single sign-on (issue 19,
-- src/api/auth/sso/domain-proof.ts, docs/security.md "Single sign-on").
--
-- 0095 let an admin list any domain in workspace_sso.allowed_domains: just-in-time membership
-- then rested on a claim nobody checked. A domain now admits newcomers only once its DNS carries
--   _cadenza-sso.<domain>  TXT  "cadenza-sso=<token>"
-- with the token issued to this workspace for this domain (a record published for another
-- workspace proves nothing here). The record is looked up through the installation's resolver
-- (CADENZA_DNS_RESOLVER), the one the domain health checks use.
--
--   token        random, issued when the domain is listed; kept while it stays listed
--   verified_at  set by a check that found the record; null: not proven, admits nobody
--   checked_at, check_error   the last check and, when it failed, why in words
create table workspace_sso_domain (
  workspace_id  uuid not null references workspace_sso(workspace_id) on delete cascade,
  domain        text not null check (length(domain) between 3 and 253 and domain = lower(domain)),
  token         text not null check (length(token) between 16 and 100),
  verified_at   timestamptz,
  checked_at    timestamptz,
  check_error   text check (length(check_error) <= 500),
  created_at    timestamptz not null default now(),
  primary key (workspace_id, domain)
);
-- A domain is proven by one workspace at most: a sign-in by email domain finds one workspace.
-- Unproven claims may overlap (a claim alone must not lock the domain's real owner out).
create unique index workspace_sso_domain_verified on workspace_sso_domain (domain) where verified_at is not null;

-- Domains listed before this migration are kept, unproven, each with a fresh token (gen_random_uuid:
-- 122 random bits as hex): their workspaces' admins see the record to publish under Settings ->
-- Single sign-on, and until they verify, those domains admit nobody new (existing members still sign in).
insert into workspace_sso_domain (workspace_id, domain, token)
select s.workspace_id, d.domain, replace(gen_random_uuid()::text, '-', '')
  from workspace_sso s cross join lateral unnest(s.allowed_domains) as d(domain)
on conflict do nothing;
