-- The warmup receiving side (src/warmup/receive/recogniser.ts) asks, once per pulled batch, which
-- of the batch's senders are mailboxes of this installation (in any workspace: a pool spans
-- workspaces) that are warmup members. mailbox_email leads with workspace_id, so that question
-- needs its own index on the address alone; it keeps a human reply's bail-out one index probe.
create index mailbox_email_any on mailbox (lower(email)) where removed_at is null;
