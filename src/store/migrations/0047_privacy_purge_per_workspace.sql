-- The purge's counts per workspace (src/privacy/purge-role.ts): the retention settings show a
-- workspace's admins what the last purge removed of their own data, never figures of another
-- workspace ({"<workspace id>": {"messages": 12, …}, …}; a workspace with nothing removed is left
-- out). Null on the days purged before this column: their counts were kept for all workspaces only.
alter table privacy_purge_day add column workspace_counts jsonb;
