-- Domain health (issue 14, src/sending/dns/domain-monitor.ts): the last check of each domain a
-- workspace sends from (the domains of its mailboxes) and of its tracking host, and the history of
-- its changes.
--
-- `verdict` is the last check's answer (ok, broken, or unknown when lookups failed); `status` is the
-- last verdict that said something (ok or broken): a DNS timeout neither breaks a domain nor
-- recovers it, so it raises no alert. Each change of `status` is one row of domain_health_change,
-- written in the same transaction as the check; a change between ok and broken (not the first
-- check) is an alert: the app lists it, and a trigger queues the `domain.health_changed` webhook in
-- the same transaction, like the other webhook events (0009_webhooks.sql).

create table domain_health (
  workspace_id  uuid not null references workspace(id) on delete cascade,
  domain        text not null,
  purpose       text not null check (purpose in ('sending', 'tracking')),
  verdict       text not null check (verdict in ('ok', 'broken', 'unknown')),
  status        text check (status in ('ok', 'broken')),
  -- each check: kind, name, status, published, differences, publish (the record to publish)
  checks        jsonb not null,
  checked_at    timestamptz not null,
  -- when `status` last changed
  changed_at    timestamptz,
  primary key (workspace_id, purpose, domain)
);
-- The daily re-check looks for the domains checked longest ago.
create index domain_health_due on domain_health (checked_at);

create table domain_health_change (
  id            bigserial primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  domain        text not null,
  purpose       text not null,
  -- null: the domain's first check (not an alert)
  from_status   text,
  to_status     text not null check (to_status in ('ok', 'broken')),
  -- the checks that failed (kind, name, status, differences), for the alert's text
  failing       jsonb not null default '[]',
  at            timestamptz not null,
  -- a person marked the alert read in the app
  seen_at       timestamptz
);
create index domain_health_change_workspace on domain_health_change (workspace_id, id desc);

create function webhook_from_domain_health() returns trigger language plpgsql as $$
begin
  insert into webhook_delivery (endpoint_id, workspace_id, event_id, event_type, payload, next_attempt_at)
  select w.id, n.workspace_id, 'domain:' || n.id, 'domain.health_changed',
         jsonb_build_object('domain', n.domain, 'purpose', n.purpose, 'from', n.from_status, 'to', n.to_status,
                            'failing', n.failing, 'at', n.at),
         n.at
  from new_rows n
  join webhook_endpoint w on w.workspace_id = n.workspace_id and w.disabled_at is null and 'domain.health_changed' = any (w.events)
  where n.from_status is not null
  on conflict do nothing;
  return null;
end $$;
create trigger webhook_domain_health after insert on domain_health_change referencing new table as new_rows
  for each statement execute function webhook_from_domain_health();
