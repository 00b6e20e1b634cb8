-- API keys get a scope besides their role (issue 19): a read-only key may make only safe requests
-- (GET, HEAD), whatever its role allows, for a dashboard or a warehouse sync that should never
-- change anything. Existing keys keep reading and writing.
alter table api_key add column read_only boolean not null default false;
