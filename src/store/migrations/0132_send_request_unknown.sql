-- A mailbox's unknown sends, oldest first (src/sending/outbox.ts listUnknown): the sender asks
-- before every claim. Without this index PostgreSQL read them through the index of every open
-- request (0045's send_request_message_open), where each send leaves an entry behind when it
-- passes through in_flight until vacuum removes it: 10 ms a call, three calls a send, 80% of the
-- database's time at 10,000 mailboxes (docs/benchmarks.md). Unknown requests are rare, so this
-- index is small and each send's path through in_flight never touches it.
create index send_request_unknown on send_request (mailbox_id, updated_at, id) where state = 'unknown';
