-- Tracking: opens, clicks and unsubscribes seen by the tracking endpoints (src/tracking/), each
-- with the evidence the classifier weighed and its verdict, so the UI can tell likely-human opens
-- and clicks from those of image proxies and security scanners (STYLE habit 9: the reason is kept).
--
-- Not partitioned: partitions need a maintenance job (as store/partitions.ts does for `event`), and
-- rows leave this table with their enrollment (GDPR erasure of a lead cascades here) rather than by
-- month. If the table grows past what one B-tree per index serves, partition it by range on `at`
-- in a later migration, as `event` is.
create table tracking_event (
  id               bigserial primary key,
  workspace_id     uuid not null references workspace(id) on delete cascade,
  -- An IP address and a user agent are personal data: they go when the enrollment goes (a lead's
  -- erasure cascades lead -> enrollment -> here). send_request_id needs no foreign key of its own:
  -- a send request is deleted only with its enrollment, and every write here is hot (each foreign
  -- key is a trigger per row, each index a B-tree insert per row).
  send_request_id  uuid,
  enrollment_id    uuid references enrollment(id) on delete cascade,
  kind             text not null check (kind in ('open', 'click', 'unsubscribe')),
  -- clicks: the destination and the link's position in the message
  url              text,
  link_index       integer,
  method           text,
  user_agent       text,
  ip               inet,
  -- milliseconds between the send (message.at) and this request; null when the send time is unknown
  delay_ms         bigint,
  -- opens and clicks: classifyOpen / classifyClick; unsubscribes: reason holds the source
  verdict          text check (verdict in ('human', 'proxy', 'scanner', 'unknown')),
  confidence       real check (confidence >= 0 and confidence <= 1),
  reason           text,
  at               timestamptz not null
);
-- The events of an enrollment, in time order (the lead's activity view).
create index tracking_event_enrollment on tracking_event (enrollment_id, at);
-- Per day per workspace (reports), a range scan on at within one workspace.
create index tracking_event_workspace_at on tracking_event (workspace_id, at);
-- The events of one send are found through its enrollment's (a handful of rows), so no index of
-- their own.

-- The batch writer looks up each send's time by its request (message.send_request_id had no index).
create index if not exists message_send_request on message (send_request_id) where send_request_id is not null;
