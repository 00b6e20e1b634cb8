-- Invitations to a workspace (src/api/auth/invitations.ts). An admin invites an address with a
-- role; the link carries a random single-use token of which only the SHA-256 is stored, so a copy
-- of the database lets nobody join. A pending invitation is one neither accepted nor revoked and
-- not past expires_at; the rules live in the code that opens it, under `for update`.

create table invitation (
  id            uuid primary key,
  workspace_id  uuid not null references workspace(id) on delete cascade,
  email         text not null,
  role          text not null check (role in ('owner', 'admin', 'member')),
  token_hash    text not null,
  invited_by    uuid references app_user(id) on delete set null,
  created_at    timestamptz not null default now(),
  expires_at    timestamptz not null,
  accepted_at   timestamptz,
  accepted_by   uuid references account(id) on delete set null,
  revoked_at    timestamptz
);
create unique index invitation_token on invitation (token_hash);
create index invitation_workspace on invitation (workspace_id, created_at);
-- A new invitation to an address replaces its pending one (the older link stops working).
create index invitation_email on invitation (workspace_id, lower(email));
