-- GET /leads at 100k leads (issue 5: p99 under 100 ms).

-- The list is newest first with keyset pagination on (created_at, id) (src/api/http/pagination.ts).
-- The cursor carries created_at as a JavaScript Date (milliseconds), while a default now() keeps
-- microseconds: rows between the cursor's millisecond and the last row's microsecond would be
-- skipped. Milliseconds in the column make the cursor exact.
alter table lead alter column created_at type timestamptz(3);
create index lead_workspace_created on lead (workspace_id, created_at desc, id desc);

-- Search is a substring match, so a b-tree cannot serve it; a trigram GIN index over one normalised
-- column can (ILIKE '%term%'). pg_trgm is a trusted contrib extension: PostgreSQL needs the contrib
-- files (standard in distribution packages) and CREATE on the database, not a superuser; PGlite
-- loads it from its bundle (src/store/store.ts passes it in `extensions`).
create extension if not exists pg_trgm;

-- Email, "first last" and company in one lower-cased column. The unit separator (U+001F) between
-- fields keeps a term from matching across two of them ("smith acme"), while "ana smith" still
-- matches a first and last name.
alter table lead add column search_text text generated always as (
  lower(email_norm || E'\x1f' || coalesce(first_name, '') || ' ' || coalesce(last_name, '') || E'\x1f' || coalesce(company, ''))
) stored;
create index lead_search on lead using gin (search_text gin_trgm_ops);
