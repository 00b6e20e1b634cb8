import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { migrate } from '../../src/store/migrate.ts';
import { openStore, type Store } from '../../src/store/store.ts';
import { startCadenza, type CadenzaChild } from './drill/cadenza-child.ts';
import { seedDrill } from './drill/seed.ts';
import { checkDeliveries, drillRequests, firstCommitAfter, settledStates } from './drill/verdict.ts';

/**
 * The failover drill with manual promotion (docs/operations.md, "Replication and failover"):
 * a primary with a synchronous standby (pg-pair.sh), `cadenza start --roles sender` on the
 * multi-host URL, sends under way on the mail bed, then SIGKILL of the primary, `pg_ctl promote`
 * of the standby `promoteAfterMs` later, and Cadenza carries on against it.
 *
 * Verdict: the checks of drill/verdict.ts, from the prospects' INBOXes and the promoted database
 * (no step sent twice, none forgotten, every request settled). Figures: how long after the kill
 * Cadenza's first write on the new primary committed (resume), and how long until every send was
 * settled. The same checks run in the Patroni drill (patroni-drill.ts).
 *
 * Mailboxes sync41..48 of the bed (the server files Sent copies), prospects are plus-addresses of
 * sync49..52, tagged per run (drill/seed.ts).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const pair = join(root, 'test', 'ops', 'pg-pair.sh');
const run = promisify(execFile);
const SENDERS = [41, 42, 43, 44, 45, 46, 47, 48];
const PROSPECTS = [49, 50, 51, 52];

export interface DrillOptions {
  /** 1..8 mailboxes (sync41..48). */
  mailboxes: number;
  leadsPerMailbox: number;
  /** Between the kill and pg_ctl promote: how long detection takes (Patroni: its TTL). */
  promoteAfterMs: number;
  pairDir: string;
  log?: (line: string) => void;
}

export interface DrillReport {
  sends: number;
  sentBeforeKill: number;
  killToPromotedMs: number;
  /** Kill → Cadenza's first commit on the promoted node. */
  resumeMs: number | null;
  /** Kill → every request settled. */
  settledMs: number;
  duplicates: string[];
  forgotten: string[];
  unsettled: string[];
  output: string;
}

export async function pairTools(): Promise<string | null> {
  try {
    await run('bash', ['-c', 'command -v pg_basebackup && (command -v pg_ctl || test -x "$(pg_config --bindir)/pg_ctl")']);
    return null;
  } catch {
    return 'PostgreSQL server binaries (pg_ctl, pg_basebackup) are not installed';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runFailoverDrill(o: DrillOptions): Promise<DrillReport> {
  const log = o.log ?? (() => undefined);
  const env = { ...process.env, PG_PAIR_DIR: o.pairDir };
  const pg = (...args: string[]) => run(pair, args, { env });
  log('pair: fresh primary + synchronous standby');
  await pg('destroy');
  await pg('start');
  const url = (await pg('url')).stdout.trim();
  const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-drill-'));
  let cadenza: CadenzaChild | null = null;
  let store: Store | null = null;
  try {
    store = await openStore({ databaseUrl: url, poolSize: 4, failoverWaitMs: 60_000 });
    await migrate(store);
    const seed = await seedDrill(store, { senders: SENDERS.slice(0, o.mailboxes), prospects: PROSPECTS, leadsPerMailbox: o.leadsPerMailbox });
    const requests = () => drillRequests(store!);
    const sends = seed.sends;

    log(`cadenza: start --roles sender on ${url}`);
    cadenza = startCadenza({ databaseUrl: url, roles: ['sender'], master: seed.master, dataDir });

    // The kill comes while the first round is under way: some sends recorded, the rest not yet.
    const firstRound = Math.max(1, Math.floor(o.mailboxes / 2));
    const until = Date.now() + 90_000;
    let before = await requests();
    while (before.filter((r) => r.state === 'sent').length < firstRound) {
      if (Date.now() > until) throw new Error(`no sends within 90 s:\n${cadenza.output()}`);
      await sleep(20);
      before = await requests();
    }
    const sentBefore = before.filter((r) => r.state === 'sent').map((r) => r.id);
    await pg('kill', 'node_a');
    // pg-pair.sh returns once the port is closed: commits until then were the old primary's.
    const killedAt = Date.now();
    log(`killed the primary with ${sentBefore.length} of ${sends} sent (${before.filter((r) => r.state === 'in_flight').length} in flight)`);
    await sleep(o.promoteAfterMs);
    await pg('promote', 'node_b');
    const promotedAt = Date.now();
    log(`promoted node_b ${promotedAt - killedAt} ms after the kill`);

    // Cadenza's first commit on the new primary (drill/verdict.ts). The short drill may have sent
    // everything before the kill, so the watch goes on until that first commit is seen, not only
    // until every request is settled.
    let resumeMs: number | null = null;
    const settleBy = Date.now() + 60_000 + o.leadsPerMailbox * 75_000;
    let after = await requests();
    while (Date.now() < settleBy) {
      after = await requests();
      if (resumeMs === null) {
        const first = await firstCommitAfter(store, killedAt).catch(() => null);
        if (first !== null) resumeMs = first - killedAt;
      }
      if (resumeMs !== null && after.every((r) => settledStates.has(r.state))) break;
      await sleep(100);
    }
    const settledMs = Date.now() - killedAt;
    await sleep(1_500); // late deliveries land before counting

    const verdict = await checkDeliveries(after, sentBefore);
    return { sends, sentBeforeKill: sentBefore.length, killToPromotedMs: promotedAt - killedAt, resumeMs, settledMs, ...verdict, output: cadenza.output() };
  } finally {
    await cadenza?.stop();
    await store?.close().catch(() => undefined);
    await pg('destroy').catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// `npm run drill:failover`: the full drill, its figures printed.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const skip = await pairTools();
  if (skip) {
    console.error(`drill skipped: ${skip}`);
    process.exit(2);
  }
  const r = await runFailoverDrill({
    mailboxes: Number(process.env.DRILL_MAILBOXES ?? 8),
    leadsPerMailbox: Number(process.env.DRILL_LEADS ?? 2),
    promoteAfterMs: Number(process.env.DRILL_PROMOTE_AFTER_MS ?? 1_000),
    pairDir: process.env.PG_PAIR_DIR ?? join(tmpdir(), 'cadenza-drill-pair'),
    log: (l) => console.log(l),
  });
  const { output, ...figures } = r;
  console.log(JSON.stringify(figures, null, 2));
  const ok = r.duplicates.length === 0 && r.forgotten.length === 0 && r.unsettled.length === 0;
  if (!ok) console.log(output);
  process.exit(ok ? 0 : 1);
}
