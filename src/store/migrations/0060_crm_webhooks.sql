-- CRM webhooks as triggers for the change reader (issue 17, src/crm/webhooks/).
-- A webhook never carries data Cadenza applies: a verified one only bumps wake_seq, and every
-- process's sync loop (src/crm/crm-sync.ts) that sees the number move reads the connection from its
-- stored cursor within a poll; many hooks in a burst move it many times and cost one read.
--   hook_secret          what a delivery is verified with, sealed with the workspace's data key like
--                        the token: Pipedrive's basic-auth password (random, Cadenza's own), or
--                        HubSpot's app client secret (the v3 signature's key, given by the admin).
--   hook_ids             the webhook ids the CRM gave when Cadenza registered them (Pipedrive), so
--                        that a new registration deletes the old ones first.
--   hooks_registered_at  when they were registered; null: (re)register at the next round that can
--                        (set back to null on resume and on a new token).
--   hook_error           why the last registration failed (shown; polling goes on meanwhile).
--   hook_verified_at     the last delivery that verified: while recent, the connection is read on
--                        the long reconcile interval instead of the short poll.
alter table crm_connection add column hook_secret bytea;
alter table crm_connection add column hook_ids jsonb;
alter table crm_connection add column hooks_registered_at timestamptz;
alter table crm_connection add column hook_error text;
alter table crm_connection add column hook_verified_at timestamptz;
alter table crm_connection add column wake_seq bigint not null default 0;
