-- Pacing and dispatch (issue "Sending pipeline"): the planned send instant of each queued
-- request, what counts against a mailbox's budget, caps per sequence and per workspace, bounce
-- tracking for mailbox health, and the dispatcher's per-mailbox bookkeeping.
-- The buckets live here, not in memory: a mailbox's usage is read back from send_request
-- (claimed_at of requests handed to a server), so a restart changes nothing.

-- The planned slot (null: not planned yet). The claim takes a request only once send_at <= now;
-- the dispatcher (src/sending/dispatch) writes it, always >= due_at.
alter table send_request add column send_at timestamptz;
-- When the dispatcher last decided this request; with send_at null it means "planned, no slot in
-- the horizon" (plan_note says why), as opposed to null/null, "new: plan me".
alter table send_request add column planned_at timestamptz;
alter table send_request add column plan_note text;
-- Set at claim time (reserveSlot). A request counts against its mailbox's day (and its sequence's
-- and workspace's) while claimed_at is set AND its state is in_flight, sent, unknown or failed:
-- i.e. it was handed to a server. A request that goes back to the queue, or is cancelled before
-- the transport (lastLook), stops counting by its state alone, whoever forgets to release it.
alter table send_request add column claimed_at timestamptz;
-- A bounce reported for this send (DSN, or a 5xx recipient rejection): the mailbox's bounce rate.
alter table send_request add column bounced_at timestamptz;
alter table send_request add column bounce_kind text check (bounce_kind in ('hard', 'soft'));

-- A mailbox's usage (its counted sends by time) and its recent sends for the bounce rate.
create index send_request_usage on send_request (mailbox_id, claimed_at) where claimed_at is not null;
-- A workspace's usage (workspace and sequence caps).
create index send_request_ws_usage on send_request (workspace_id, claimed_at) where claimed_at is not null;
-- What the dispatcher must (re)plan: new requests, and requests whose slot is older than their
-- due time (requeued by a retry, revived after a pause). Small: rows leave it once planned.
create index send_request_unplanned on send_request (mailbox_id)
  where state = 'queued' and ((send_at is null and planned_at is null) or send_at < due_at);

-- Caps on top of the mailboxes' own, counted per local day of the workspace's zone; null: none.
alter table sequence add column daily_cap integer check (daily_cap >= 0);
alter table workspace add column daily_cap integer check (daily_cap >= 0);

-- Rotation's load: a mailbox's live enrollments.
create index enrollment_mailbox_live on enrollment (mailbox_id) where state in ('active', 'paused');

-- The dispatcher's last pass over a mailbox, and when the mailbox is next due for a full re-plan
-- (its next local midnight: a new day's budget, slots freed by cancelled requests).
create table mailbox_plan (
  mailbox_id  uuid primary key references mailbox(id) on delete cascade,
  planned_at  timestamptz not null,
  replan_at   timestamptz,
  planned     integer not null default 0,
  unplaced    integer not null default 0
);
create index mailbox_plan_replan on mailbox_plan (replan_at) where replan_at is not null;
