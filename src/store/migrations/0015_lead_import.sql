-- Lead imports as jobs (issue 5: CSV import at 50k–200k rows with progress). The upload is read
-- as it arrives and written in batches; after each batch the counts below are committed, so a
-- browser polling the job sees progress, and a crash leaves the counts of what was written.
create table lead_import (
  id uuid primary key,
  workspace_id uuid not null references workspace(id) on delete cascade,
  -- The member who started it (null for an API key).
  created_by uuid references app_user(id) on delete set null,
  file_name text,
  status text not null default 'running' check (status in ('running', 'done', 'failed', 'cancelled')),
  on_duplicate text not null check (on_duplicate in ('skip', 'update')),
  mapping jsonb not null default '{}',
  -- As the user chose it ('auto', 'utf-8', 'windows-1252'), then as read ('utf-8', 'windows-1252', 'utf-16le'…).
  encoding_requested text not null default 'auto',
  encoding text,
  delimiter text,
  -- The header's columns copied into the rejects report (a re-imported report's bookkeeping columns left out).
  headers jsonb,
  bom boolean not null default false,
  -- From Content-Length when the client sent one: the progress bar's denominator.
  total_bytes bigint,
  bytes_read bigint not null default 0,
  -- Settled rows only: rows_read = inserted + updated + unchanged + rejected after every batch.
  rows_read integer not null default 0,
  inserted integer not null default 0,
  updated integer not null default 0,
  unchanged integer not null default 0,
  rejected integer not null default 0,
  warnings integer not null default 0,
  rejects_by_reason jsonb not null default '{}',
  error text,
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now(),
  finished_at timestamptz(3)
);
create index lead_import_workspace_created on lead_import (workspace_id, created_at desc, id desc);

-- The rejects report: one row per rejected CSV row, with the row's fields (or, for a row that could
-- not be parsed, its raw text), written with the batch that rejected it.
create table lead_import_reject (
  import_id uuid not null references lead_import(id) on delete cascade,
  workspace_id uuid not null references workspace(id) on delete cascade,
  line integer not null,
  reason text not null,
  message text not null,
  fields jsonb,
  raw text,
  primary key (import_id, line)
);
