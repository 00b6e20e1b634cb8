/**
 * The CRM soak (issue 17): N activities to each CRM's emulator through the production writer and
 * connector on a simulated clock (test/crm/soak.ts), in two cases per CRM, interleaved round by
 * round (bench/lib/rounds.ts):
 *
 *   steady   no outage, no faults, every activity due at once: the anchor, the pace at which the
 *            writer drains a backlog within the CRM's limit;
 *   outage   the CRM down for 3 hours from minute 30, 2% of batch answers lost after the CRM acted,
 *            1% answered 429 with Retry-After.
 *
 *   npm run bench -- crm-soak [--activities=50000] [--kinds=hubspot,twenty] [--cases=steady,outage] [--arrival-minutes=120] [--outage-hours=3] [--rounds=1] [--backend=postgres]
 *
 * Figures per CRM and case: lost, duplicated (both must be 0), the most requests in one of the
 * CRM's windows against its limit, requests it refused for the limit, activities written per
 * simulated minute (peak, and the median while the backlog after the outage drained), how long
 * writing took to resume after the outage, the outage's probes, and the real time taken. The ratio
 * "backlog after the outage / backlog with none" says whether the end of an outage floods the CRM
 * (above 1) or not.
 */
import { describeLoad, interleavedRounds, loadFigures, machineLoad, showSpread, spread, spreadFigures, type Figures } from './lib/rounds.ts';
import { flag, intFlag } from './lib/args.ts';
import { benchStore } from './support/backends.ts';
import { runCrmSoak, SOAK_KINDS, type CrmSoakResult, type SoakKind } from '../test/crm/soak.ts';

const CASES = ['steady', 'outage'] as const;

export default async function crmSoak(args: string[]): Promise<Record<string, unknown>> {
  const activities = intFlag(args, 'activities', 50_000);
  const arrivalMinutes = intFlag(args, 'arrival-minutes', 120);
  const outageHours = intFlag(args, 'outage-hours', 3);
  const rounds = intFlag(args, 'rounds', 1);
  const backend = (flag(args, 'backend') ?? 'postgres') as 'postgres' | 'pglite';
  const kinds = (flag(args, 'kinds') ?? SOAK_KINDS.join(',')).split(',').filter(Boolean) as SoakKind[];
  for (const k of kinds) if (!SOAK_KINDS.includes(k)) throw new Error(`--kinds: ${k} is not one of ${SOAK_KINDS.join(', ')}`);
  // One case alone (Pipedrive's outage case takes a quarter of an hour by itself); the ratio to steady then reads n/a.
  const cases = (flag(args, 'cases') ?? CASES.join(',')).split(',').filter(Boolean) as Array<(typeof CASES)[number]>;
  for (const c of cases) if (!CASES.includes(c)) throw new Error(`--cases: ${c} is not one of ${CASES.join(', ')}`);
  const before = machineLoad();
  console.log(`CRM soak: ${activities.toLocaleString('en')} activities per CRM arriving over ${arrivalMinutes} simulated minutes; outage ${outageHours} h; ${kinds.join(', ')}; ${backend}; ${describeLoad(before)}`);

  const out: Record<string, unknown> = { activities, arrival_minutes: arrivalMinutes, outage_hours: outageHours, backend };
  for (const kind of kinds) {
    const r = await interleavedRounds({
      rounds,
      cases,
      warmup: false,
      run: async (c, round): Promise<Figures> => {
        const s = await benchStore(backend);
        try {
          let shown = 0;
          const x = await runCrmSoak({
            store: s.store,
            kind,
            activities,
            arrivalMinutes: c === 'steady' ? 0 : arrivalMinutes,
            seed: `crm-soak-${kind}-${c}-${round}`,
            ...(c === 'steady' ? { outage: { fromMinute: 0, hours: 0 }, lostAnswerRate: 0, injected429Rate: 0 } : { outage: { fromMinute: 30, hours: outageHours } }),
            progress: (settled, total) => {
              const tenth = Math.floor((settled / total) * 10);
              if (tenth > shown) {
                shown = tenth;
                process.stdout.write(`  ${kind} ${c} round ${round}: ${'#'.repeat(tenth).padEnd(10, '.')} ${settled.toLocaleString('en')}/${total.toLocaleString('en')}\r`);
              }
            },
          });
          process.stdout.write('\n');
          if (x.lost || x.duplicated || x.pending || x.refusedForLimit || x.peakPerWindow > x.limit.requests) {
            throw new Error(`${kind} ${c}: lost ${x.lost}, duplicated ${x.duplicated}, pending ${x.pending}, refused for the limit ${x.refusedForLimit}, peak ${x.peakPerWindow}/${x.limit.requests}`);
          }
          report(kind, c, x);
          return figuresOf(x);
        } finally {
          await s.drop();
        }
      },
    });
    for (const c of cases) for (const f of ['lost', 'duplicated', 'peak_per_window', 'limit_per_window', 'refused_for_limit', 'peak_per_min', 'backlog_per_min', 'limit_per_min', 'sim_minutes', 'real_s', 'requests']) Object.assign(out, spreadFigures(`${kind}_${c}_${f}`, r.spread(c, f)));
    if (cases.includes('outage')) Object.assign(out, spreadFigures(`${kind}_outage_resumed_after_s`, r.spread('outage', 'resumed_after_s')), spreadFigures(`${kind}_outage_probes`, r.spread('outage', 'probes')));
    if (cases.length < CASES.length) continue;
    const steady = r.spread('steady', 'backlog_per_min');
    const backlog = r.spread('outage', 'backlog_per_min');
    // Round by round: the backlog's pace after the outage over the pace of the same backlog with no outage.
    const steadyPeak = r.values('steady', 'backlog_per_min');
    const flood = spread(r.values('outage', 'backlog_per_min').map((v, i) => v / steadyPeak[i]!));
    console.log(`${kind}: a backlog with no outage written at ${showSpread(steady)} a minute (simulated); the backlog after the outage at ${showSpread(backlog)}: ${showSpread(flood)} of that`);
    Object.assign(out, spreadFigures(`${kind}_backlog_over_steady_peak`, flood, 2));
  }
  const after = machineLoad();
  console.log(`load after: ${describeLoad(after)}`);
  return { ...out, ...loadFigures(before, after) };
}

function report(kind: SoakKind, c: string, x: CrmSoakResult): void {
  console.log(
    `  ${kind} ${c}: ${x.written.toLocaleString('en')} written, ${x.skipped} skipped (no contact), lost ${x.lost}, duplicated ${x.duplicated}; ` +
      `peak ${x.peakPerWindow}/${x.limit.requests} requests per ${x.limit.windowMs / 1000} s, ${x.refusedForLimit} refused for the limit; ` +
      `${x.peakPerMinute}/min at most (the limit allows ${x.limitPerMinute}); ` +
      (c === 'outage' ? `${x.outageProbes} probes during the outage, writing resumed ${x.resumedAfterS?.toFixed(0)} s after it, backlog at ${x.backlogPerMinute}/min; ${x.lostAnswersInjected} lost answers and ${x.injected429} 429s injected; ` : '') +
      `${x.simMinutes.toFixed(0)} simulated minutes in ${(x.realMs / 1000).toFixed(1)} s`,
  );
}

function figuresOf(x: CrmSoakResult): Figures {
  return {
    lost: x.lost,
    duplicated: x.duplicated,
    peak_per_window: x.peakPerWindow,
    limit_per_window: x.limit.requests,
    refused_for_limit: x.refusedForLimit,
    peak_per_min: x.peakPerMinute,
    backlog_per_min: x.backlogPerMinute,
    limit_per_min: x.limitPerMinute,
    sim_minutes: x.simMinutes,
    real_s: x.realMs / 1000,
    requests: x.requests,
    resumed_after_s: x.resumedAfterS ?? 0,
    probes: x.outageProbes,
  };
}
