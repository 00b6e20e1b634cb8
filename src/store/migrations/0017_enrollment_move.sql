-- Moving an enrollment to another sequence (api: POST …/enrollments/{id}/move). The old
-- enrollment ends in its own terminal state, 'moved', and points at the enrollment that replaced
-- it, so that a prospect's answer to a message the old sequence sent is passed on to the new one
-- (sequence/enrollment-service.ts), and the lead's timeline can say where it went.
alter table enrollment drop constraint enrollment_state_check;
alter table enrollment add constraint enrollment_state_check
  check (state in ('active', 'paused', 'replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'failed', 'moved'));
alter table enrollment add column moved_to uuid references enrollment(id) on delete set null;
