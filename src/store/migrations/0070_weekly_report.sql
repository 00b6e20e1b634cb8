-- The weekly analytics report by email (issue 18, src/api/weekly-report/): a workspace's choice,
-- the members who asked for it, and one durable record per workspace and ISO week, claimed before
-- the mail goes out, so that the report is sent once a week however many processes run the job
-- and however often they restart.
create table weekly_report_setting (
  workspace_id  uuid primary key references workspace(id) on delete cascade,
  enabled       boolean not null default false,
  -- When, in the workspace's time zone: the ISO weekday (1 Monday … 7 Sunday) and the hour.
  weekday       smallint not null default 1 check (weekday between 1 and 7),
  hour          smallint not null default 8 check (hour between 0 and 23),
  updated_at    timestamptz not null
);

-- Members who asked to receive it; none: the workspace's owners receive it.
create table weekly_report_recipient (
  workspace_id  uuid not null references workspace(id) on delete cascade,
  user_id       uuid not null references app_user(id) on delete cascade,
  created_at    timestamptz not null,
  primary key (workspace_id, user_id)
);

-- One row per workspace and ISO week ('2026-W49'), inserted by the process that sends it (the
-- claim). A send that failed releases the claim (claimed_at null, error kept) for the next run to
-- try again, up to three attempts; a claim whose process died before sending stays taken: a week
-- without its report rather than two reports.
create table weekly_report_run (
  workspace_id  uuid not null references workspace(id) on delete cascade,
  iso_week      text not null,
  claimed_at    timestamptz,
  claimed_by    text,
  attempts      integer not null default 0,
  sent_at       timestamptz,
  recipients    integer,
  error         text,
  primary key (workspace_id, iso_week)
);
