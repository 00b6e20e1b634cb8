-- Warnings per reason on an import job (issue 11): the web import showed only the rejects, while
-- the command line said "warning 3: invalid time zone (imported without it)". A warning's row is
-- written; the count per reason says which values were dropped.
alter table lead_import add column warnings_by_reason jsonb not null default '{}';
