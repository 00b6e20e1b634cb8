-- Warmup federation (issue 14, src/warmup/federation/): two installations join their warmup pools.
-- Each installation's identity (an Ed25519 signing key and an X25519 agreement key) is derived from
-- its master key, so nothing secret is stored here: a peer row holds only the other side's public
-- card. A peering is opt-in on both sides: a row added here is 'pending' until a signed request
-- between the two succeeds (the other side can only sign to peers it added), then 'active'.
-- 'left' is final: this side removed the peer, or the peer told us it left; its requests are
-- refused from then on, and a new peering needs a new row (the old one stays for the record).
create table warmup_peer (
  id              uuid primary key,
  -- The workspace whose admin added the peer: only its warmup members are offered to the peer.
  workspace_id    uuid not null references workspace(id) on delete cascade,
  -- The local pool the peer's members join as receivers.
  pool            text not null default 'default',
  name            text not null,
  url             text not null,
  -- The peer's public keys, raw 32 bytes in base64 (its card).
  sign_key        text not null,
  agree_key       text not null,
  state           text not null check (state in ('pending', 'active', 'left')),
  added_at        timestamptz not null,
  activated_at    timestamptz,
  left_at         timestamptz,
  -- Who ended it: 'us' (removed here) or 'peer' (its leave notice, or its refusal of our request).
  left_by         text check (left_by in ('us', 'peer')),
  -- The exchange with the peer: the last success, the failures since, and when to try again.
  exchanged_at    timestamptz,
  failures        integer not null default 0,
  retry_at        timestamptz,
  last_error      text
);
-- One live peering per peer key and workspace (a left one may be followed by a new one).
create unique index warmup_peer_live on warmup_peer (workspace_id, sign_key) where state <> 'left';
create index warmup_peer_key on warmup_peer (sign_key);

-- A peer's members as its last exchange offered them: addresses and schedules only, never a
-- credential. Replaced whole at each exchange; dropped when the peering ends.
create table warmup_remote_member (
  peer_id      uuid not null references warmup_peer(id) on delete cascade,
  address      text not null,
  provider     text not null,
  domain       text not null,
  time_zone    text not null,
  -- The peer's member's working hours, local 'HH:MM'.
  day_start    text not null,
  day_end      text not null,
  -- How many warmup mails it accepts from us a day.
  capacity     integer not null check (capacity between 0 and 200),
  updated_at   timestamptz not null,
  primary key (peer_id, address)
);
create index warmup_remote_member_address on warmup_remote_member (lower(address));

-- Replayed requests: a nonce is accepted once per peer within the signature window (older ones are
-- purged; the window refuses their timestamps anyway).
create table warmup_peer_nonce (
  peer_id   uuid not null references warmup_peer(id) on delete cascade,
  nonce     text not null,
  seen_at   timestamptz not null,
  primary key (peer_id, nonce)
);

-- Mail between installations names its peer: the pair key it is written with, who is told the
-- schedule and the placement. A first mail to a peer's member waits for the peer to accept it into
-- its schedule (peer_accepted_at); a receipt of a peer's mail waits to be reported (reported_at).
alter table warmup_mail
  add column peer_id           uuid references warmup_peer(id) on delete set null,
  add column peer_accepted_at  timestamptz,
  add column reported_at       timestamptz;
create index warmup_mail_peer on warmup_mail (peer_id, planned_at) where peer_id is not null;
