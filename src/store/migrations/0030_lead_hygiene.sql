-- List hygiene (issue 14): each lead's address is checked (syntax, MX/A, disposable domain, role
-- account, earlier hard bounce or complaint) and carries the verdict with its reasons
-- (src/leads/hygiene/). Invalid leads are not enrolled; risky ones wait in the review queue until a
-- member approves (enrollable) or rejects (never enrolled) them. Null verdict: not checked yet.
alter table lead add column hygiene_verdict text check (hygiene_verdict in ('valid', 'risky', 'invalid'));
-- [{ "code": "role_account", "message": "…" }, …], worst first (src/leads/hygiene/reasons.ts).
alter table lead add column hygiene_reasons jsonb not null default '[]';
alter table lead add column hygiene_checked_at timestamptz(3);
-- The review of a risky lead; cleared when a new check finds it no longer risky.
alter table lead add column hygiene_review text check (hygiene_review in ('approved', 'rejected'));
alter table lead add column hygiene_reviewed_at timestamptz(3);
alter table lead add column hygiene_reviewed_by uuid references app_user(id) on delete set null;
-- The leads list's verdict filter and the review queue, newest first like the list.
create index lead_hygiene on lead (workspace_id, hygiene_verdict, created_at desc, id desc);

-- The import report's counts by verdict (of the leads each batch inserted or updated).
alter table lead_import add column hygiene_valid integer not null default 0;
alter table lead_import add column hygiene_risky integer not null default 0;
alter table lead_import add column hygiene_invalid integer not null default 0;
