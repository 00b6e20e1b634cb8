-- "A mailbox needs attention" (issue 19) beyond the mailbox's own health (0099's trigger on
-- mailbox.health: bounce-rate warnings and pauses, refused credentials, a server that cannot be
-- reached, placement warnings and pauses):
--
-- 1. A domain alert of deliverability (0031, src/sending/dns/): a sending domain or tracking host
--    whose status went from ok to broken (a DNS record missing or different, a blocklist listing,
--    a certificate problem). One row of domain_health_change is written per change of status, never
--    per check, so the event (keyed domain:<change id>) is told once per breakage; a domain's first
--    check is no alert (as the webhook and the app's alert list). It concerns the owner of the
--    domain's live mailboxes when they have one owner, otherwise the whole workspace.
--
-- 2. Warmup placement trouble while the mailbox is already in warning for another reason (a bounce
--    warning is not overwritten by placement, src/warmup/placement/evaluate.ts, so 0099's trigger
--    sees no change): warmup_member.cap_reason going from none to a reason. From ok, the mailbox's
--    own trigger tells it (the evaluation moves the mailbox to warning or paused in the same
--    transaction), so it is not told twice. Keyed warmup:<mailbox>:<md5(reason)>:<UTC day>.

create function notify_from_domain_health() returns trigger language plpgsql as $$
begin
  insert into notification_event (workspace_id, source_key, kind, user_id, title, body, link, occurred_at)
  select n.workspace_id, 'domain:' || n.id, 'mailbox_attention',
         (select case when count(distinct m.user_id) = 1 and bool_and(m.user_id is not null) then (array_agg(m.user_id))[1] end
          from mailbox m
          where m.workspace_id = n.workspace_id and m.removed_at is null and n.purpose = 'sending'
            and lower(split_part(m.email, '@', 2)) = n.domain),
         n.domain || case
           when exists (select 1 from jsonb_array_elements(n.failing) f where f->>'status' = 'listed') then ' is on a blocklist'
           when n.purpose = 'tracking' then ': the tracking host is broken'
           else ': DNS records need attention' end,
         coalesce((select 'Failing: ' || string_agg(coalesce(f->>'kind', '?') || ' ' || coalesce(f->>'name', '') || ' ' || coalesce(f->>'status', ''), '; ')
                   from jsonb_array_elements(n.failing) f), 'Open Domains to see why.'),
         '/domains', n.at
  from new_rows n
  where n.from_status = 'ok' and n.to_status = 'broken'
  on conflict do nothing;
  return null;
end $$;
create trigger notify_domain_health after insert on domain_health_change referencing new table as new_rows
  for each statement execute function notify_from_domain_health();

create function notify_from_warmup_cap() returns trigger language plpgsql as $$
begin
  insert into notification_event (workspace_id, source_key, kind, user_id, title, body, link)
  select m.workspace_id, 'warmup:' || m.id || ':' || md5(new.cap_reason) || ':' || to_char(now() at time zone 'UTC', 'YYYY-MM-DD'),
         'mailbox_attention', m.user_id, m.email || ': warmup placement trouble', new.cap_reason, '/mailboxes'
  from mailbox m
  where m.id = new.mailbox_id and m.health = 'warning' and m.removed_at is null
    and new.cap_reason is not null and old.cap_reason is null
  on conflict do nothing;
  return null;
end $$;
create trigger notify_warmup_cap after update of cap_reason on warmup_member
  for each row execute function notify_from_warmup_cap();
