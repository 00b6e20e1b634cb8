-- A warmup mail is answered once. The reply's insert checked "not exists" (replies.ts), which two
-- concurrent syncs of the same mail (a resync racing the IDLE pull) can both pass under READ
-- COMMITTED: the index makes the second insert a no-op instead of a second reply. Duplicates an
-- earlier version may have planned are dropped first, keeping the one sent (or planned) first.
delete from warmup_mail w
 using warmup_mail k
 where w.kind = 'reply' and k.kind = 'reply'
   and w.pool = k.pool and w.in_reply_to = k.in_reply_to
   and (coalesce(w.sent_at, 'infinity'::timestamptz), w.planned_at, w.id) > (coalesce(k.sent_at, 'infinity'::timestamptz), k.planned_at, k.id);
create unique index warmup_mail_one_reply on warmup_mail (pool, in_reply_to) where kind = 'reply';
