-- The warmup network (issue 14, src/warmup/). A mailbox opts in as a member of a pool; every warmup
-- mail, sent or received, is one row of warmup_mail, keyed by its Message-ID. A member's placement
-- (the share of its warmup mail that receivers found in the inbox rather than junk) is read from
-- the rows it sent whose receiver recorded a folder; the health verdict drawn from it is stored on
-- the member (cap_factor, cap_reason), and a pause goes to the mailbox's own health.
--
-- A member of another installation (federation, later) is an address and a schedule: warmup_mail
-- keeps addresses beside the optional mailbox ids, so a remote sender or receiver needs no row here.
create table warmup_member (
  mailbox_id    uuid primary key references mailbox(id) on delete cascade,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  pool          text not null default 'default',
  -- The daily warmup volume the ramp rises to (src/warmup/plan/ramp.ts).
  target        integer not null default 30 check (target between 1 and 200),
  joined_at     timestamptz not null,
  -- Placement health: 1, or below 1 when placement dropped (the warmup and campaign cap is
  -- multiplied by it), with the reason a user reads.
  cap_factor    real not null default 1 check (cap_factor > 0 and cap_factor <= 1),
  cap_reason    text
);
create index warmup_member_pool on warmup_member (pool);

create table warmup_mail (
  id                   uuid primary key,
  pool                 text not null,
  kind                 text not null check (kind in ('first', 'reply')),
  message_id           text not null unique,
  in_reply_to          text,
  sender_mailbox_id    uuid references mailbox(id) on delete set null,
  sender_address       text not null,
  receiver_mailbox_id  uuid references mailbox(id) on delete set null,
  receiver_address     text not null,
  planned_at           timestamptz not null,
  sent_at              timestamptz,
  -- Written by the receiving side when its sync reads the mail: where it landed.
  received_at          timestamptz,
  received_folder      text check (received_folder in ('inbox', 'junk')),
  -- The receiver's folder actions (moved out of junk, flagged, read) and its reply, when done.
  rescued_at           timestamptz,
  replied_at           timestamptz
);
create index warmup_mail_sender_received on warmup_mail (sender_mailbox_id, received_at) where received_folder is not null;
create index warmup_mail_pairs on warmup_mail (pool, planned_at);
