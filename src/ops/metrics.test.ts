import { expect, it } from 'vitest';
import { buildServer } from '../api/server.ts';
import { systemClock } from '../common/clock.ts';
import { openStore } from '../store/store.ts';
import { Metrics } from './metrics.ts';

it('serves counters and the reply-to-stop HDR percentiles as Prometheus text on GET /metrics', async () => {
  const metrics = new Metrics();
  for (let i = 1; i <= 100; i++) metrics.recordReplyToStop(i * 10);
  metrics.recordReplyToStop(5_000);
  metrics.ingested.inc({ label: 'human_reply' }, 3);
  metrics.quarantined.inc();
  const store = await openStore({});
  const app = buildServer({ store, clock: systemClock, version: 'test', metrics });
  try {
    const r = await app.inject({ method: 'GET', url: '/metrics' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain/);
    expect(r.body).toContain('cadenza_reply_to_stop_ms{quantile="0.5"} 510');
    expect(r.body).toContain('cadenza_reply_to_stop_ms{quantile="0.99"} 1000');
    expect(r.body).toMatch(/cadenza_reply_to_stop_ms\{quantile="1"\} 500\d/);
    expect(r.body).toContain('cadenza_reply_to_stop_ms_count 101');
    expect(r.body).toContain('cadenza_ingested_messages_total{label="human_reply"} 3');
    expect(r.body).toContain('cadenza_quarantined_messages_total 1');
    expect(metrics.summary()).toMatchObject({ p50: 510, p99: 1000, count: 101 });
  } finally {
    await app.close();
    await store.close();
  }
});
