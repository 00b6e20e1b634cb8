import type { Command } from 'commander';
import { loadConfig } from '../../common/config.ts';
import { cadenzaError } from '../../common/errors.ts';
import { createLogger } from '../../common/logger.ts';
import { formatProgress, type DemoProgress } from '../../demo/progress.ts';
import { startDemo, type DemoRun } from '../../demo/run-demo.ts';
import { startApp, type RunningApp } from '../../app/app.ts';
import { migrate } from '../../store/migrate.ts';
import { openStore, type Store } from '../../store/store.ts';
import { globals } from '../context.ts';

interface DemoCliOptions {
  leads: string;
  speed: string;
  duration: string;
  every: string;
  seed: string;
  keep?: boolean;
  serve?: boolean;
  port?: string;
  host?: string;
}

function positive(name: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) throw cadenzaError('INVALID_INPUT', `--${name} must be a number from ${min} to ${max}, got '${v}'`, { option: name, value: v });
  return n;
}

export function register(program: Command): void {
  program
    .command('demo')
    .option('--leads <n>', 'leads to create', '300')
    .option('--speed <x>', 'simulated time runs this many times faster than real time (3600: an hour a second)', '3600')
    .option('--duration <seconds>', 'real seconds to run before stopping (ignored with --serve)', '60')
    .option('--every <seconds>', 'real seconds between progress lines', '5')
    .option('--seed <seed>', 'the same seed fills the same workspace', 'cadenza-demo')
    .option('--keep', 'write the demo workspace to the configured store (data dir or DATABASE_URL) instead of memory, to inspect it afterwards')
    .option('--serve', 'also serve the API and web app on the configured store, and keep running until Ctrl-C (implies --keep)')
    .option('--port <n>', 'port for --serve (env PORT, default 8080)')
    .option('--host <addr>', 'address for --serve (env HOST, default 127.0.0.1, this machine only; 0.0.0.0 for every interface)')
    .action(async (o: DemoCliOptions, cmd: Command) => {
      const g = globals(cmd);
      const cfg = loadConfig();
      const leads = positive('leads', o.leads, 1, 20_000);
      const speed = positive('speed', o.speed, 1, 1_000_000);
      const duration = positive('duration', o.duration, 1, 86_400);
      const every = positive('every', o.every, 0.2, 3_600);
      const keep = o.keep === true || o.serve === true;
      const log = createLogger({ level: process.env.CADENZA_LOG_LEVEL ?? 'warn' });
      const databaseUrl = g.databaseUrl ?? cfg.DATABASE_URL;
      const dataDir = g.dataDir ?? cfg.CADENZA_DATA_DIR;

      // Ctrl-C (or SIGTERM) asks for a graceful stop, however often it comes: a terminal signals the
      // whole process group, and the tsx runner relays it again, so the handler stays until the end.
      let requestStop = () => undefined as void;
      const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
      process.on('SIGINT', requestStop);
      process.on('SIGTERM', requestStop);

      // The web app's sessions and rate limits run on real time; what it shows and does is stamped
      // in the demo's time (app.worldClock, switched below). It runs the api role alone: the demo's
      // scheduler, senders and sync loops own the demo mailboxes.
      let app: RunningApp | undefined;
      let store: Store;
      if (o.serve) {
        app = await startApp({ databaseUrl, dataDir, port: o.port !== undefined ? Number(o.port) : cfg.PORT, host: o.host ?? cfg.HOST, roles: ['api'], log, ...(cfg.CADENZA_PUBLIC_URL ? { publicUrl: cfg.CADENZA_PUBLIC_URL } : {}) });
        store = app.store;
      } else {
        store = await openStore(keep ? { databaseUrl, dataDir: databaseUrl ? undefined : dataDir } : {});
        await migrate(store);
      }

      let run: DemoRun | undefined;
      let ticker: NodeJS.Timeout | undefined;
      // Every timer of the running parts is unref'd (they never keep a process alive by themselves):
      // this one holds the process until the demo has stopped and printed its last line.
      const hold = setInterval(() => undefined, 60_000);
      const print = (p: DemoProgress) => {
        if (g.json) process.stdout.write(`${JSON.stringify({ ...p, at: new Date(p.at).toISOString() })}\n`);
        else process.stdout.write(`${formatProgress(p)}\n`);
      };
      try {
        const started = Date.now();
        run = await startDemo({ store, leads, rate: speed, seed: o.seed, log, ...(app?.url ? { publicUrl: app.url } : {}) });
        app?.worldClock.use(run.clock);
        if (!g.json) {
          process.stdout.write(
            `Demo workspace ${run.workspaceId}: ${leads} leads, ${run.workspace.mailboxes.length} mailboxes (${run.workspace.mailboxes.map((m) => `${m.email} on ${m.provider}`).join(', ')}), ${run.workspace.sequences.length} sequences; ` +
              `1 real second = ${formatSpan(speed * 1000)} simulated (ready in ${Date.now() - started} ms)${app?.url ? `; web app at ${app.url}` : ''}\n`,
          );
        }
        const r = run;
        let busy = false;
        ticker = setInterval(() => {
          if (busy) return;
          busy = true;
          void r.progress().then(print, (e: unknown) => log.error({ err: e }, 'demo progress failed')).finally(() => (busy = false));
        }, every * 1000);
        const timer = o.serve ? undefined : setTimeout(requestStop, duration * 1000);
        await stopRequested;
        clearTimeout(timer);
      } finally {
        if (ticker) clearInterval(ticker);
        if (run) {
          await run.stop();
          if (!g.json) process.stdout.write('Demo stopped. Final counts:\n');
          print(await run.progress());
          if (!g.json) process.stdout.write(`Mail the simulated prospects sent back: ${Object.entries(run.reactions).map(([k, n]) => `${n} ${k.replace(/_/g, ' ')}`).join(', ')}\n`);
          if (keep) {
            const { stopped } = await run.retire();
            if (!g.json) process.stdout.write(`Demo ended: ${stopped} enrollments still running were stopped; the demo mailboxes are marked as gone.\n`);
          }
        }
        app?.worldClock.reset();
        if (app) await app.stop();
        else await store.close();
        clearInterval(hold);
        process.off('SIGINT', requestStop);
        process.off('SIGTERM', requestStop);
      }
    });
}

function formatSpan(ms: number): string {
  if (ms >= 86_400_000) return `${+(ms / 86_400_000).toFixed(1)} days`;
  if (ms >= 3_600_000) return `${+(ms / 3_600_000).toFixed(1)} hours`;
  if (ms >= 60_000) return `${+(ms / 60_000).toFixed(1)} minutes`;
  return `${+(ms / 1000).toFixed(1)} seconds`;
}
