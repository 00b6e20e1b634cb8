-- When the custom tracking host's current certificate was stored (its issuance or last renewal),
-- for the admins' page; null until one is.
alter table tracking_domain add column issued_at timestamptz;
