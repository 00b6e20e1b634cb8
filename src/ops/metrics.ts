import { build as buildHistogram, type Histogram } from 'hdr-histogram-js';
import { Counter, Gauge, Registry } from 'prom-client';
import { nearestRank, REPLY_TO_STOP_PERCENTILES } from './figures.ts';

/**
 * Process metrics in Prometheus text format (`GET /metrics`), one registry per process (injected,
 * so tests and several apps in one process do not share counters).
 *
 * Latencies go into HDR histograms (hdr-histogram-js): exact percentiles at 3 significant digits
 * over any range, which Prometheus buckets cannot give for a p99 target. They are exposed as
 * gauges read at scrape time: `<name>{quantile="0.5"|"0.9"|"0.99"|"1"}` and `<name>_count`, each
 * quantile at its nearest rank (ops/figures.ts `nearestRank`, the method the API's figures use).
 *
 * Reply-to-stop (promise 3) is defined in ops/figures.ts: which messages count, the unit (real ms)
 * and the instant; ingestion measures each stop once (`stopLatencyMs`), stores it with the message
 * and records the same number here. This histogram is this process's since it started, every
 * workspace together; the durable, workspace-scoped figure over any window is the API's
 * (`GET …/analytics` replyToStop, `cadenza status`). INTERNALDATE has whole seconds, so over IMAP a
 * figure may read up to 1 s high (the delivery instant is truncated to its second); the end-to-end
 * test also measures from its own clock, before the SMTP injection, to the stop it observes.
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
  readonly sendingDomains: Gauge<'status'>;
  readonly transcriptions: Counter<'result'>;
  readonly crmHooks: Counter<'result'>;
  private readonly latencies = new Map<string, Histogram>();

  constructor() {
    this.ingested = new Counter({ name: 'cadenza_ingested_messages_total', help: 'Inbound messages stored, by classification label', labelNames: ['label'], registers: [this.registry] });
    this.actions = new Counter({ name: 'cadenza_ingest_actions_total', help: 'What inbound messages did (reply, hard_bounce, out_of_office, ...)', labelNames: ['action'], registers: [this.registry] });
    this.quarantined = new Counter({ name: 'cadenza_quarantined_messages_total', help: 'Messages quarantined (unparseable, too large, not fetchable)', registers: [this.registry] });
    this.syncErrors = new Counter({ name: 'cadenza_sync_errors_total', help: 'Mailbox sync failures (each followed by a reconnect with backoff)', labelNames: ['provider'], registers: [this.registry] });
    // Attempts by this process's senders, not the "sent" figure (ops/figures.ts: the journal's step_sent, possibly-sent included, resends by hand not).
    this.sends = new Counter({ name: 'cadenza_sends_total', help: 'Send attempts by outcome, in this process (the sent figure users see is the journal\'s: GET …/analytics, cadenza status)', labelNames: ['outcome'], registers: [this.registry] });
    this.syncedMailboxes = new Gauge({ name: 'cadenza_synced_mailboxes', help: 'Mailboxes this process syncs (holds the lease of)', registers: [this.registry] });
    this.pushBusLost = new Counter({ name: 'cadenza_push_bus_connection_lost_total', help: 'LISTEN connections of the push bus lost (each followed by a reconnect and a catch-up of every work pass)', registers: [this.registry] });
    // Set by the process that ran the last daily domain pass (sending/dns/domain-monitor.ts); the others show none.
    this.sendingDomains = new Gauge({ name: 'cadenza_domains', help: 'Domains (sending domains and tracking hosts, every workspace) by health status after the last daily check: ok, broken, unknown (never judged)', labelNames: ['status'], registers: [this.registry] });
    this.transcriptions = new Counter({ name: 'cadenza_call_transcriptions_total', help: "Call transcription jobs by how they ended in this process: done, retry (failed, tried again later), failed (for good), lost (the recording was deleted meanwhile, or another worker took the job over)", labelNames: ['result'], registers: [this.registry] });
    this.crmHooks = new Counter({ name: 'cadenza_crm_webhooks_total', help: 'CRM webhook deliveries received by this process (POST /hooks/crm/:id): woken (verified, the connection read soon), own (verified, Cadenza\'s own write coming back: no read), refused (signature or credentials wrong: 401), unknown (no such connection or none taking webhooks: 404)', labelNames: ['result'], registers: [this.registry] });
    this.latency('cadenza_reply_to_stop_ms', 'Reply-to-stop in real ms of the inbound messages that stopped or paused their enrollment, committed by this process since it started: end of the stopping transaction minus server receipt (IMAP: 1 s resolution). The durable per-workspace figure: GET …/analytics replyToStop');
  }

  /**
   * An HDR histogram (from 0 ms, 3 significant digits; it grows past a day rather than clamp, so
   * it holds every value the stored figure does) exposed as quantile gauges.
   */
  latency(name: string, help: string): Histogram {
    const existing = this.latencies.get(name);
    if (existing) return existing;
    const h = buildHistogram({ lowestDiscernibleValue: 1, highestTrackableValue: 86_400_000, numberOfSignificantValueDigits: 3, autoResize: true });
    this.latencies.set(name, h);
    new Gauge({
      name,
      help,
      labelNames: ['quantile'],
      registers: [this.registry],
      collect() {
        for (const p of REPLY_TO_STOP_PERCENTILES) this.set({ quantile: String(p / 100) }, valueAtPercentile(h, p));
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

  /** Records a reply-to-stop latency: the whole real ms ingestion stored with the stop (ops/figures.ts stopLatencyMs). */
  recordReplyToStop(ms: number): void {
    this.latencies.get('cadenza_reply_to_stop_ms')!.recordValue(Math.max(0, Math.round(ms)));
  }

  /** p50, p90, p99, max and count of a latency histogram (nearest rank, as the gauges). */
  summary(name = 'cadenza_reply_to_stop_ms'): { p50: number; p90: number; p99: number; max: number; count: number } {
    const h = this.latencies.get(name);
    if (!h || h.totalCount === 0) return { p50: 0, p90: 0, p99: 0, max: 0, count: 0 };
    return { p50: valueAtPercentile(h, 50), p90: valueAtPercentile(h, 90), p99: valueAtPercentile(h, 99), max: h.maxValue, count: h.totalCount };
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * The histogram's value at the p-th percentile's nearest rank (0 when empty). HDR's own lookup
 * takes a percentile and rounds its count up; asking for the middle of the rank's band
 * ((rank - 0.5) / count) lands on the rank whatever the floating-point error of the product.
 */
function valueAtPercentile(h: Histogram, p: number): number {
  if (h.totalCount === 0) return 0;
  return h.getValueAtPercentile((100 * (nearestRank(h.totalCount, p) - 0.5)) / h.totalCount);
}
