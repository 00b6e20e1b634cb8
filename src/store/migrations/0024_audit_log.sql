-- The workspace audit log (src/api/audit): who signed in or failed to, who changed members, roles,
-- API keys, invitations, mailboxes and settings, and who downloaded an export.
--
-- Append-only. The code has an insert and the retention purge, nothing else; the triggers below
-- refuse any UPDATE, DELETE or TRUNCATE unless the transaction set cadenza.audit_purge to 'on'
-- (`set local`, which src/api/audit/retention.ts does for its delete and nothing else does). No
-- foreign key to workspace: a cascade from it would be a delete the log must not allow silently.
create table audit_event (
  id            uuid primary key,
  workspace_id  uuid not null,
  at            timestamptz not null,
  -- signin.succeeded, signin.failed, member.added, member.removed, member.role_changed,
  -- api_key.created, api_key.revoked, invitation.sent, invitation.accepted, invitation.revoked,
  -- mailbox.connected, mailbox.removed, export.downloaded, settings.changed
  action        text not null,
  -- session: a signed-in person (actor_user_id, their membership then); api_key: actor_key_id;
  -- system: Cadenza itself (a revocation that followed a removal); anonymous: a failed sign-in.
  actor_kind    text not null check (actor_kind in ('session', 'api_key', 'system', 'anonymous')),
  actor_user_id uuid,
  actor_key_id  uuid,
  -- The actor as a person reads it (an address, a key's name and prefix), kept as it was at the time.
  actor_label   text not null,
  -- What the event was about: a member's address, a key's name, a mailbox's address, a file.
  target        text,
  ip            text,
  detail        jsonb not null default '{}'
);
create index audit_event_workspace on audit_event (workspace_id, at desc, id desc);
create index audit_event_action on audit_event (workspace_id, action, at desc);

create function audit_event_append_only() returns trigger language plpgsql as $$
begin
  if coalesce(current_setting('cadenza.audit_purge', true), '') <> 'on' or tg_op = 'UPDATE' then
    raise exception 'audit_event is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
  end if;
  return old;
end $$;
create trigger audit_event_no_update before update on audit_event for each row execute function audit_event_append_only();
create trigger audit_event_no_delete before delete on audit_event for each row execute function audit_event_append_only();
create trigger audit_event_no_truncate before truncate on audit_event for each statement execute function audit_event_append_only();
