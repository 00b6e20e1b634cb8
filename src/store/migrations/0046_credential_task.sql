-- Work on a mailbox that needs its credential opened, asked for by a process that may not read
-- credentials (the API under least privilege, docs/security.md "Database connections") and carried
-- out by one that may: the sender role (src/sending/credential-tasks/). One owner per action:
--   test    sign in to the mailbox's SMTP and IMAP servers with its stored password;
--   reply   answer an inbound message from the inbox, from the mailbox that received it;
--   revoke  end an OAuth grant at its provider once the mailbox's credential was deleted.
-- The API waits for a test's or a reply's answer (bounded); a revocation is never waited for: it
-- is retried with backoff until the provider answers, or given up, and the sealed token erased.
create table credential_task (
  id            uuid primary key,
  workspace_id  uuid not null,
  mailbox_id    uuid not null,
  kind          text not null check (kind in ('test', 'reply', 'revoke')),
  -- What the asker gave (a reply's text and idempotency key); emptied once the task has ended.
  input         jsonb not null default '{}'::jsonb,
  -- revoke: the deleted credential, still sealed with its workspace's data key (bound to
  -- 'mailbox:<id>' as before); erased once the task has ended. Never readable by the API.
  sealed        bytea,
  state         text not null default 'queued' check (state in ('queued', 'running', 'done', 'failed', 'cancelled')),
  -- done: the answer; failed: { code, message, details } (the error the asker is given).
  result        jsonb,
  attempts      integer not null default 0,
  run_after     timestamptz not null default now(),
  -- A running task whose claim ran out was left by a process that died (task-queue.ts recoverStale).
  claimed_until timestamptz,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create index credential_task_due on credential_task (run_after) where state = 'queued';
create index credential_task_running on credential_task (claimed_until) where state = 'running';

-- Deleting an OAuth credential (a mailbox's removal) leaves a revocation to do: its sealed token
-- moves, still sealed, into a task in the same transaction, so the API (which may delete a
-- credential but not read one) hands it over without ever reading it, and nothing is lost if the
-- process dies after the commit. Runs with the deleter's rights: it needs INSERT on credential_task.
create or replace function credential_revocation_task() returns trigger
language plpgsql
as $$
begin
  if old.kind = 'oauth' then
    insert into credential_task (id, workspace_id, mailbox_id, kind, sealed)
    select gen_random_uuid(), m.workspace_id, old.mailbox_id, 'revoke', old.ciphertext
    from mailbox m where m.id = old.mailbox_id;
  end if;
  return old;
end
$$;
create trigger mailbox_credential_revocation after delete on mailbox_credential
  for each row execute function credential_revocation_task();
