/**
 * Call setup and media round trip of the browser softphone on the telephony bed (docs/dialer.md):
 *
 *   npm run bench -- call-setup [--calls=10]
 *
 * Headless Chromium (the web app's softphone module, test/telephony/browser.ts) registers over WSS
 * with Kamailio and makes --calls calls through rtpengine to sipp answering as an echo. For each:
 * call() to ringing (180 back through Kamailio), call() to answered (200 OK, ICE and DTLS done),
 * and the echo round trip (unmute to the rep's own 600 Hz tone heard again: encode, rtpengine both
 * ways, sipp, jitter buffer, decode). Loopback only: the software's own cost, not a network's.
 * Starts the bed (test/telephony/telbed.sh) if it is not running, and stops it again if it started it.
 */
import { intFlag } from './lib/args.ts';
import { describeLoad, loadFigures, machineLoad, showSpread, spread, spreadFigures } from './lib/rounds.ts';
import { softphoneBrowser } from '../test/telephony/browser.ts';
import { TONES, bedCredentials, carrier, telBed, telBedSkipReason } from '../test/telephony/telbed.ts';

interface PageCall {
  ringingMs: number;
  answeredMs: number;
  echoMs: number;
}

export default async function callSetup(args: string[]): Promise<Record<string, unknown>> {
  const calls = intFlag(args, 'calls', 10);
  const skip = telBedSkipReason();
  if (skip) throw new Error(skip);
  const before = machineLoad();
  console.log(describeLoad(before));
  const wasRunning = await telBed('status').then(() => true, () => false);
  await telBed('start');
  const b = await softphoneBrowser();
  const results: PageCall[] = [];
  try {
    const page = await b.browser.newPage();
    await page.goto(b.url);
    await page.evaluate(async (config) => {
      const w = window as unknown as { phone: InstanceType<Window['cadenza']['Softphone']> };
      w.phone = new window.cadenza.Softphone(config);
      await w.phone.register();
    }, bedCredentials('bench-call-setup'));
    const uas = carrier('uas-answer-echo.xml', { echo: true, calls, timeoutMs: calls * 20_000 });
    for (let i = 0; i < calls; i++) {
      const r = await page.evaluate(async ({ n, hz }) => {
        const w = window as unknown as { phone: InstanceType<Window['cadenza']['Softphone']> };
        const t0 = performance.now();
        const marks: Record<string, number> = {};
        let answered!: () => void;
        const isAnswered = new Promise<void>((r) => (answered = r));
        const call = w.phone.call(n, (e) => {
          marks[e.event] ??= performance.now() - t0;
          if (e.event === 'answered') answered();
        });
        await isAnswered;
        await new Promise((r) => setTimeout(r, 1000));
        call.setMuted(true);
        await new Promise((r) => setTimeout(r, 800));
        call.setMuted(false);
        const echoMs = await window.cadenza.waitForTone(call.remoteStream!, hz, 3000);
        call.hangup();
        await call.ended;
        return { ringingMs: marks.ringing ?? -1, answeredMs: marks.answered ?? -1, echoMs };
      }, { n: `+1555020${String(i).padStart(4, '0')}`, hz: TONES.browserHz });
      results.push(r);
      console.log(`call ${i + 1}/${calls}: ringing ${r.ringingMs.toFixed(0)} ms, answered ${r.answeredMs.toFixed(0)} ms, echo round trip ${r.echoMs.toFixed(0)} ms`);
    }
    const done = await uas.done;
    if (done.code !== 0) throw new Error(`sipp (the carrier) failed: ${done.output.slice(-500)}`);
    await page.close();
  } finally {
    await b.close();
    if (!wasRunning) await telBed('stop');
  }
  const ringing = spread(results.map((r) => r.ringingMs));
  const answered = spread(results.map((r) => r.answeredMs));
  const echo = spread(results.map((r) => r.echoMs).filter((x) => x >= 0));
  const after = machineLoad();
  console.log(`call() to ringing:  ${showSpread(ringing)} ms (median, min–max of ${ringing.n})`);
  console.log(`call() to answered: ${showSpread(answered)} ms`);
  console.log(`echo round trip:    ${showSpread(echo)} ms (${echo.n} of ${calls} heard)`);
  console.log(describeLoad(after));
  return { calls, ...spreadFigures('ringing_ms', ringing, 0), ...spreadFigures('answered_ms', answered, 0), ...spreadFigures('echo_rtt_ms', echo, 0), echo_heard: echo.n, ...loadFigures(before, after) };
}
