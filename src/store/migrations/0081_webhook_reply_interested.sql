-- The `reply.interested` webhook (docs/api.md "Webhooks"): a prospect's reply that the classifier
-- read as interested, the positive reply of the analytics (src/ops/figure-facts.ts positiveReply:
-- inbound, intent 'interested', threaded to an enrollment).
--
-- Written by a trigger on the insert of the message, in the pipeline's transaction, like every
-- other delivery (0009_webhooks.sql): the fact is the stored message, so it fires once per reply,
-- however the reply's engine event goes (a rule's move, a reply to a finished sequence, a reply
-- passed on along moved_to). A person's relabel (src/ingest/reclassify.ts) updates the label, not
-- the insert, so relabelling back and forth never fires it again; the event id names the message
-- row, and the unique (endpoint, event) index keeps a second delivery out besides.
create function webhook_from_message() returns trigger language plpgsql as $$
begin
  insert into webhook_delivery (endpoint_id, workspace_id, event_id, event_type, payload, next_attempt_at)
  select w.id, n.workspace_id, 'message:' || n.id, 'reply.interested',
         jsonb_build_object('intent', n.intent, 'intentConfidence', n.intent_confidence,
                            'enrollmentId', n.enrollment_id, 'leadId', e.lead_id, 'email', l.email, 'sequenceId', e.sequence_id,
                            'inboxMessageId', n.id, 'messageId', n.message_id, 'inReplyTo', n.in_reply_to, 'mailboxId', n.mailbox_id,
                            'subject', n.subject, 'at', coalesce(n.received_at, n.at)),
         -- the reply's own time, unless its Date header is ahead of our clock (a sender's skew)
         least(coalesce(n.received_at, n.at), n.created_at)
  from new_rows n
  join webhook_endpoint w on w.workspace_id = n.workspace_id and w.disabled_at is null and 'reply.interested' = any (w.events)
  join enrollment e on e.id = n.enrollment_id
  join lead l on l.id = e.lead_id
  where n.direction = 'inbound' and n.intent = 'interested'
  on conflict do nothing;
  return null;
end $$;
create trigger webhook_message after insert on message referencing new table as new_rows
  for each statement execute function webhook_from_message();
