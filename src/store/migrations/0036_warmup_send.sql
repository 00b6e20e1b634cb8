-- The warmup network's sending side (issue 14, src/warmup/send/). A planned warmup mail is sent by
-- its mailbox's sender under the same token bucket as campaign mail: claimed_at is its slot, set
-- once (the claim is `where claimed_at is null`, so a planned mail is handed to a server at most
-- once) and counted with the mailbox's campaign claims against its daily cap, hourly ceiling and
-- gaps (sending/dispatch). send_note says why a claimed mail was not sent (a refusal, a transient
-- failure that put it back).
--
-- A reply is planned by the receiving side (warmup/receive): it answers a mail whose subject and
-- greeting it read, so both are kept with it (the text is regenerated from the fields at send).
alter table warmup_mail
  add column claimed_at     timestamptz,
  add column send_note      text,
  add column reply_subject  text,
  add column reply_to_name  text,
  -- The language a reply answers in (the first mail's, as the receiver verified it).
  add column language       text check (language in ('en', 'de', 'fr', 'es'));
-- The sender's due mail, in planned order (warmup/send/warmup-sender.ts).
create index warmup_mail_due on warmup_mail (sender_mailbox_id, planned_at) where claimed_at is null and sent_at is null;
-- Its claimed mail in the bucket's window (dispatch usage, reserve usage).
create index warmup_mail_claimed on warmup_mail (sender_mailbox_id, claimed_at) where claimed_at is not null;

-- The planning role's record of each pool's planned day (warmup/plan-role.ts): a day is planned
-- once, even when its plan is empty (a small pool whose pairs all wait their cooldown), and what
-- the plan fell short of is kept for a person to read.
create table warmup_plan_day (
  pool        text not null,
  day         date not null,
  planned_at  timestamptz not null,
  sends       integer not null,
  -- Senders that got fewer than they wanted: [{ id, wanted, planned }].
  shortfall   jsonb not null default '[]',
  primary key (pool, day)
);
