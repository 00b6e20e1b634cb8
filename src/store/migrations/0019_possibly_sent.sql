-- Exactly once (docs/architecture.md, "Exactly once: what proves a send did not happen").
--
-- 'possibly_sent': a request whose send may have been handed over and whose absence cannot be
-- proven (a crash or a lost answer after the handover, and the Sent folder shows a copy still
-- marked pending, or no proof exists). The sequence continues as if it were sent (the next step
-- threads on its Message-ID); it is never retried automatically; the user sees it and may send it
-- again by hand (POST /enrollments/{id}/sends/{sendId}/resend).
alter table send_request drop constraint send_request_state_check;
alter table send_request add constraint send_request_state_check
  check (state in ('queued', 'in_flight', 'sent', 'failed', 'cancelled', 'unknown', 'possibly_sent'));

-- The rule the transport's Sent folder follows, written at the claim (so a mailbox whose setting
-- changes, or a request claimed by an older version, is judged by the rule it was sent under):
--   copy_first     Cadenza APPENDs the copy BEFORE the handover, marked $CadenzaPending, and clears
--                  the mark after the server's answer: no copy = never handed over.
--   provider_copy  the provider files the copy itself after accepting: no copy after the grace
--                  period = never accepted.
--   null           claimed before this migration (the copy was appended after the answer):
--                  absence proves nothing.
alter table send_request add column proof text check (proof in ('copy_first', 'provider_copy'));

-- A resend asked for by hand of a step that was possibly sent: it is sent once more whatever the
-- enrollment has moved on to (it already continued as if the step were sent) and recording it
-- does not advance the enrollment again.
alter table send_request add column manual_resend boolean not null default false;
