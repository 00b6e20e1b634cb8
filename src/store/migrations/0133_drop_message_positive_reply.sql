-- 0063's index of interested replies by workspace and receipt time served the headline and the
-- breakdowns, which credited every positive reply at each request. Since 0131 they read positive
-- replies from the rollup (the `positive` source, fed by the trigger on message), and the
-- experiments judge them per enrollment (0131's message_enrollment_positive). Nothing reads this
-- index any more, yet every interested reply written or relabelled still updated it.
drop index if exists message_positive_reply;
