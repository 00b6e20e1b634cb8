-- A rep's phone number on the carrier's SIP trunk (the dialer issue, docs/dialer.md "Numbers"):
-- the caller ID of the calls they place and the DID whose incoming calls ring their browser.
--   phone_number  E.164 (+ and up to 15 digits), set by an admin; null: the trunk's default caller
--                 ID, and incoming calls reach the rep only by their user id. Unique across the
--                 installation, not per workspace: one Kamailio and one trunk serve every
--                 workspace, and a DID rings exactly one browser.
alter table app_user add column phone_number text check (phone_number ~ '^\+[1-9][0-9]{6,14}$');
create unique index app_user_phone_number on app_user (phone_number) where phone_number is not null;
