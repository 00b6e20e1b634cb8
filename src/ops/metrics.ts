import { build as buildHistogram, type Histogram } from 'hdr-histogram-js';
import { Counter, Gauge, Registry } from 'prom-client';

/**
 * Process metrics in Prometheus text format (`GET /metrics`), one registry per process (injected,
 * so tests and several apps in one process do not share counters).
 *
 * Latencies go into HDR histograms (hdr-histogram-js): exact percentiles at 3 significant digits
 * over any range, which Prometheus buckets cannot give for a p99 target. They are exposed as
 * gauges read at scrape time: `<name>{quantile="0.5"|"0.99"|"1"}` and `<name>_count`.
 *
 * Reply-to-stop latency (promise 3) = when the enrollment's stop committed − when the server
 * received the message (the connector's receivedAt: IMAP INTERNALDATE, Gmail internalDate, Graph
 * receivedDateTime). INTERNALDATE has whole seconds, so over IMAP a figure may read up to 1 s high
 * (the delivery instant is truncated to its second); the end-to-end test also measures from its
 * own clock, before the SMTP injection, to the stop it observes.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly ingested: Counter<'label'>;
  readonly actions: Counter<'action'>;
  readonly quarantined: Counter;
  readonly syncErrors: Counter<'provider'>;
  readonly sends: Counter<'outcome'>;
  readonly syncedMailboxes: Gauge;
  readonly pushBusLost: Counter;
  private readonly latencies = new Map<string, Histogram>();

  constructor() {
    this.ingested = new Counter({ name: 'cadenza_ingested_messages_total', help: 'Inbound messages stored, by classification label', labelNames: ['label'], registers: [this.registry] });
    this.actions = new Counter({ name: 'cadenza_ingest_actions_total', help: 'What inbound messages did (reply, hard_bounce, out_of_office, ...)', labelNames: ['action'], registers: [this.registry] });
    this.quarantined = new Counter({ name: 'cadenza_quarantined_messages_total', help: 'Messages quarantined (unparseable, too large, not fetchable)', registers: [this.registry] });
    this.syncErrors = new Counter({ name: 'cadenza_sync_errors_total', help: 'Mailbox sync failures (each followed by a reconnect with backoff)', labelNames: ['provider'], registers: [this.registry] });
    this.sends = new Counter({ name: 'cadenza_sends_total', help: 'Send attempts by outcome', labelNames: ['outcome'], registers: [this.registry] });
    this.syncedMailboxes = new Gauge({ name: 'cadenza_synced_mailboxes', help: 'Mailboxes this process syncs (holds the lease of)', registers: [this.registry] });
    this.pushBusLost = new Counter({ name: 'cadenza_push_bus_connection_lost_total', help: 'LISTEN connections of the push bus lost (each followed by a reconnect and a catch-up of every work pass)', registers: [this.registry] });
    this.latency('cadenza_reply_to_stop_ms', 'Reply-to-stop latency in ms: stop committed minus server receipt (IMAP: 1 s resolution)');
  }

  /** An HDR histogram (1 ms .. 1 day, 3 significant digits) exposed as quantile gauges. */
  latency(name: string, help: string): Histogram {
    const existing = this.latencies.get(name);
    if (existing) return existing;
    const h = buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 86_400_000, numberOfSignificantValueDigits: 3 });
    this.latencies.set(name, h);
    new Gauge({
      name,
      help,
      labelNames: ['quantile'],
      registers: [this.registry],
      collect() {
        for (const [q, p] of [['0.5', 50], ['0.99', 99]] as const) this.set({ quantile: q }, h.totalCount ? h.getValueAtPercentile(p) : 0);
        this.set({ quantile: '1' }, h.totalCount ? h.maxValue : 0);
      },
    });
    new Gauge({
      name: `${name}_count`,
      help: `Observations in ${name}`,
      registers: [this.registry],
      collect() {
        this.set(h.totalCount);
      },
    });
    return h;
  }

  /** Records a reply-to-stop latency (ms; clamped to the histogram's range). */
  recordReplyToStop(ms: number): void {
    this.latencies.get('cadenza_reply_to_stop_ms')!.recordValue(Math.min(86_400_000, Math.max(1, Math.round(ms))));
  }

  /** p50, p99, max and count of a latency histogram. */
  summary(name = 'cadenza_reply_to_stop_ms'): { p50: number; p99: number; max: number; count: number } {
    const h = this.latencies.get(name);
    if (!h || h.totalCount === 0) return { p50: 0, p99: 0, max: 0, count: 0 };
    return { p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99), max: h.maxValue, count: h.totalCount };
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
