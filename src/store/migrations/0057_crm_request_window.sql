-- CRM sync (issue 17, src/crm/writer.ts): the CRM's request window survives a change of writer.
-- The window (src/crm/request-window.ts) is a log of the times of the requests made in the last
-- windowMs; kept only in the writer's memory, a process taking a connection over (after a crash,
-- a deploy, another process's lease) started empty and could send the CRM up to twice its limit in
-- its first window (Salesforce's is an hour). The writer stores the log here, run-length encoded
-- as [[time ms, requests], …] oldest first, after each round and reads it when it takes the lease
-- without a window of its own.
alter table crm_connection add column request_window jsonb;
