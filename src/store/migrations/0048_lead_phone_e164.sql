-- Phone numbers to E.164 (the dialer issue, first slice): `lead.phone` keeps the number as written;
-- beside it the E.164 form and the verdict src/leads/phone.ts gives it at import (or when the API
-- writes the lead), so a number that cannot be dialled is found with its reason before anyone
-- dials it. All three are null when the lead has no number.
--   phone_e164    '+' and digits, no extension. Set for a valid number, and for one of a possible
--                 length in no known number range (flagged 'not_valid': the metadata lags new
--                 ranges, and a call from that number should still find its lead); null otherwise.
--   phone_status  'valid', or 'flagged' with phone_reason.
--   phone_reason  why it is flagged, in plain words naming the country ("too short for GB").
alter table lead add column phone_e164 text;
alter table lead add column phone_status text check (phone_status in ('valid', 'flagged'));
alter table lead add column phone_reason text;
-- An incoming call is matched to the workspace's lead by the caller's E.164 number.
create index lead_phone_e164 on lead (workspace_id, phone_e164) where phone_e164 is not null;

-- The import report counts flagged numbers by reason code (src/leads/phone.ts phoneFlagCodes), as it
-- counts rejects and warnings. A flagged number never rejects its row.
alter table lead_import add column phones_flagged integer not null default 0;
alter table lead_import add column phones_flagged_by_reason jsonb not null default '{}';
