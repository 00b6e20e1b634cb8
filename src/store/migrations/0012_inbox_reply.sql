-- Replies from the unified inbox (src/sending/reply.ts).
--
-- Who an answer goes to: RFC 5322 3.6.2 sends replies to Reply-To when the message has one, and
-- "reply all" copies the other recipients, so both are kept with the inbound message. Existing
-- rows have none recorded (empty), and their replies go to From as before.
alter table message add column reply_to text[] not null default '{}';
alter table message add column cc_addrs text[] not null default '{}';

-- One row per idempotency key: a double click or a retry of the same reply never sends it twice.
-- The Message-ID is chosen once, when the key is first seen, and every retry sends under it, so
-- a retry after an unconfirmed attempt is first looked for in the Sent folder by that id.
--   sending      an attempt is in progress (since updated_at; a stale one is settled like unknown)
--   sent         accepted (or found in Sent); result holds the answer given
--   unconfirmed  handed over, no answer, and not found in Sent while we looked
--   failed       certainly not sent (refused, unreachable, credentials): a retry sends it
create table reply_request (
  workspace_id     uuid not null references workspace(id) on delete cascade,
  idempotency_key  text not null,
  inbound_id       uuid not null,
  -- sha256 of what was asked (message, text, reply all): the same key with another reply is refused
  request_hash     text not null,
  message_id       text not null,
  state            text not null check (state in ('sending', 'sent', 'unconfirmed', 'failed')),
  result           jsonb,
  last_error       text,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  primary key (workspace_id, idempotency_key)
);
