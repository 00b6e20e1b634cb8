import type { AcceleratedClock } from '../../src/demo/demo-clock.ts';
import type { ConnectorSetup } from '../../src/mailbox/connectors/connector.ts';
import type { Vault } from '../../src/mailbox/vault.ts';
import { trackingKey } from '../../src/sending/compose/tracking.ts';
import type { EnrollmentService } from '../../src/sequence/enrollment-service.ts';
import type { Store } from '../../src/store/store.ts';

/**
 * The real-time budgets of the day's load test (day-load.ts, and its role processes,
 * day-load-worker.ts): leases, idle polls and the planner's pass are given in real seconds
 * through the clock's realMs, as the demo does (src/demo/run-demo.ts), so that one process's
 * pools and a split run's behave the same.
 */
export function senderTuning(clock: AcceleratedClock) {
  return {
    publicUrl: 'http://localhost:8080',
    leaseTtlMs: clock.realMs(60_000),
    idlePollMs: clock.realMs(30_000),
    resolveEveryMs: clock.realMs(60_000),
    planEveryMs: clock.realMs(10_000),
    // An unknown request is searched for in Sent and queued again only after the grace period,
    // which must outlast the provider's delay in filing what it accepted. The emulator runs in
    // real time (a loaded machine answers a send tens of real seconds late, past the HTTP
    // deadline of 30 real seconds), so the grace is at least a real minute, as the deadline is
    // real (connectors.httpTimeoutMs): 15 simulated minutes at x120 are 7.5 real seconds. A run
    // at x120 with other work on the machine sent 18 requests twice with the shorter grace; three
    // runs since, two of them under contention, sent none (the bench now lists the requests behind
    // any duplicate, with their last error, so a recurrence names its path).
    policy: { unknownGraceMs: Math.max(15 * 60_000, clock.realMs(60_000)) },
  };
}

export function syncTuning(clock: AcceleratedClock) {
  return { leaseTtlMs: clock.realMs(60_000), reconcileMs: clock.realMs(15 * 60_000) };
}

/** What both pools take from the process (store, engine, clock, vault, tracking key, connectors). */
export function roleDeps(d: { store: Store; service: EnrollmentService; clock: AcceleratedClock; vault: Vault; master: Buffer; connectors: ConnectorSetup }) {
  return { store: d.store, service: d.service, clock: d.clock, vault: d.vault, trackingKey: trackingKey(d.master), connectors: d.connectors };
}
