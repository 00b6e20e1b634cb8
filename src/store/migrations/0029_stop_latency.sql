-- Reply-to-stop in real milliseconds, measured by ingestion when a message's signal stops or pauses
-- its enrollment (issue 11). Stamps written on a demo's accelerated clock (received_at, the
-- journal's at) are in the demo's time, where 0.3 real seconds read as 20 minutes; the latency is
-- divided by the clock's rate once, here, so analytics and metrics show one duration on one clock.
alter table message add column stop_latency_ms integer;
