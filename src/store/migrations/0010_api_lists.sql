-- The API's lists read newest first across a whole workspace with keyset pagination on (time, id)
-- (src/api/http/pagination.ts): these indexes make every page an index range scan, whatever its depth.

-- GET /inbox: inbound mail of a workspace (message_inbox serves one mailbox at a time).
create index message_inbound_workspace on message (workspace_id, at desc, id desc) where direction = 'inbound';
-- GET /enrollments
create index enrollment_workspace_created on enrollment (workspace_id, created_at desc, id desc);
