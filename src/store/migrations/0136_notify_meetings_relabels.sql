-- Notifications (issue 19, src/api/notify/): "a reply is positive (interested, meeting)", and a
-- meeting booked. 0099 told a reply only when it was stored read as `interested`. Now:
--
-- 1. A reply whose intent is `meeting` (a prospect asking to meet; the inbox filters by it) is a
--    positive reply as well: the same kind (reply_positive, so the member's choices for positive
--    replies cover it), titled "Meeting request from …".
--
-- 2. A reply whose intent becomes interested or meeting after it was stored (any writer of
--    message.intent: a person's relabel, a review settled, a re-run of the classifier) is told
--    then, once. The event keeps 0099's key, reply:<message id>, so a reply told before (stored
--    positive, or relabelled positive earlier) is never told again however often it is relabelled
--    back and forth. The key is kept until retention (src/api/notify/purge.ts RETENTION_DAYS: 90
--    days after the event was handed out, which is after the message was stored), so a relabel is
--    told only within 90 days of the message's storing: inside that window an earlier event of the
--    message still holds its key; past it the reply is old news anyway.
--
-- 3. A meeting booked, as the analytics count one (src/ops/figure-facts.ts isMeeting): the
--    journal's `meeting_booked`, or a call given the outcome `meeting_booked`, applied or ignored
--    (a meeting after the enrollment stopped is still a meeting). A new kind, meeting_booked, told
--    to the enrollment's owner (its mailbox's, as a task due) and linked to the lead's page. Keyed
--    meeting:<journal row id>: one row per meeting (a call's outcome is recorded once; a meeting
--    passed on to the enrollment that replaced a moved one is journalled there alone).
--
-- Each stays a trigger, in the transaction of whoever writes the fact, as 0099's.

alter table notification_event drop constraint notification_event_kind_check;
alter table notification_event add constraint notification_event_kind_check check (kind in ('reply_positive', 'task_due', 'mailbox_attention', 'sso_attention', 'meeting_booked'));
alter table notification_preference drop constraint notification_preference_kind_check;
alter table notification_preference add constraint notification_preference_kind_check check (kind in ('reply_positive', 'task_due', 'mailbox_attention', 'sso_attention', 'meeting_booked'));

-- The one writer of a positive reply's event, for the insert and the update alike: the inbound
-- replies among these rows that are threaded to an enrollment and read as interested or meeting.
create function notify_positive_replies(ids uuid[]) returns void language sql as $$
  insert into notification_event (workspace_id, source_key, kind, user_id, lead_id, title, body, link, occurred_at)
  select n.workspace_id, 'reply:' || n.id, 'reply_positive', m.user_id, l.id,
         case n.intent when 'meeting' then 'Meeting request from ' else 'Interested reply from ' end
           || coalesce(nullif(trim(coalesce(l.first_name, '') || ' ' || coalesce(l.last_name, '')), ''), l.email),
         coalesce(n.subject, '(no subject)'), '/inbox',
         -- the reply's own time, unless its Date header is ahead of our clock (a sender's skew)
         least(coalesce(n.received_at, n.at), n.created_at)
  from message n
  join enrollment e on e.id = n.enrollment_id
  join lead l on l.id = e.lead_id
  left join mailbox m on m.id = n.mailbox_id
  where n.id = any (ids) and n.direction = 'inbound' and n.intent in ('interested', 'meeting')
  on conflict do nothing
$$;

-- Stored positive (0099's trigger, now for both intents): only positive rows are looked up again.
create or replace function notify_from_message() returns trigger language plpgsql as $$
declare
  ids uuid[] := array(select n.id from new_rows n where n.direction = 'inbound' and n.intent in ('interested', 'meeting'));
begin
  if cardinality(ids) > 0 then
    perform notify_positive_replies(ids);
  end if;
  return null;
end $$;

-- Relabelled positive: fires only when the intent itself is set, to a positive one it was not.
create function notify_from_message_intent() returns trigger language plpgsql as $$
begin
  perform notify_positive_replies(array[new.id]);
  return null;
end $$;
create trigger notify_message_intent after update of intent on message for each row
  when (new.direction = 'inbound' and new.intent in ('interested', 'meeting') and new.intent is distinct from old.intent
        and new.created_at > now() - interval '90 days')
  execute function notify_from_message_intent();

-- The meeting: a row trigger whose WHEN keeps every other journal row (the hot path) out of it.
create function notify_from_meeting() returns trigger language plpgsql as $$
begin
  insert into notification_event (workspace_id, source_key, kind, user_id, lead_id, title, body, link, occurred_at)
  select new.workspace_id, 'meeting:' || new.id, 'meeting_booked', m.user_id, l.id,
         'Meeting booked with ' || coalesce(nullif(trim(coalesce(l.first_name, '') || ' ' || coalesce(l.last_name, '')), ''), l.email),
         case when new.type like 'call_outcome%' then 'Booked on a call' else 'Booked' end || ' · ' || s.name,
         '/leads/' || l.id, new.at
  from enrollment e
  join lead l on l.id = e.lead_id
  join sequence s on s.id = e.sequence_id
  left join mailbox m on m.id = e.mailbox_id
  where e.id = new.enrollment_id
  on conflict do nothing;
  return null;
end $$;
create trigger notify_meeting after insert on event for each row
  when (new.type in ('meeting_booked', 'meeting_booked.ignored')
        or (new.type in ('call_outcome', 'call_outcome.ignored') and new.payload->'event'->>'outcome' = 'meeting_booked'))
  execute function notify_from_meeting();
