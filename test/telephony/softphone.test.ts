import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallProgressEvent, DialerConfig } from '../../web/src/dialer/softphone.ts';
import { chromiumSkipReason } from '../web/chromium.ts';
import { softphoneBrowser } from './browser.ts';
import { rtpengineCounts } from './ng.ts';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../../src/common/clock.ts';
import { ingestRecordings, loadAnnouncement, openRecording } from '../../src/dialer/recording/ingest.ts';
import { parseWav } from '../../src/dialer/transcribe/wav.ts';
import { Vault, localKeyWrapper } from '../../src/mailbox/vault.ts';
import { seedWorkspace } from '../api.ts';
import { freshStore } from '../stores.ts';
import { TONES, bedCredentials, bedEnv, carrier, telBed, telBedSkipReason, inboundCall, sippMessages, stopAllSipp, type SippRun } from './telbed.ts';

/**
 * The browser softphone end to end: headless Chromium loads a page with the web app's softphone
 * module and CallPanel (bundled by Vite, test/telephony/page/), registers over WSS with Kamailio
 * using credentials from the API's own function, and calls through rtpengine to sipp playing the
 * carrier. Chromium's microphone is a 600 Hz tone made by sox; the carrier plays 1000 Hz.
 * Each figure measured is printed (call setup, media round trip).
 */
declare global {
  interface Window {
    __config?: DialerConfig;
    __number?: string;
    __announcement?: string;
    __events: CallProgressEvent[];
    cadenza: {
      Softphone: typeof import('../../web/src/dialer/softphone.ts').Softphone;
      toneLevels(stream: MediaStream, hz: number[], ms: number): Promise<number[]>;
      waitForTone(stream: MediaStream, hz: number, timeoutMs: number, minDb?: number, holdMs?: number): Promise<number>;
    };
  }
}

const skip = telBedSkipReason() ?? chromiumSkipReason();
const RTP_NG_PORT = Number(process.env.RTP_NG_PORT ?? 25223);

describe.skipIf(skip !== null)(`the browser softphone through Kamailio, rtpengine and coturn${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let browser: Browser;
  let url: string;
  let closeBrowser: (() => Promise<void>) | undefined;
  const figures: Record<string, number | string> = {};

  beforeAll(async () => {
    const b = await softphoneBrowser();
    browser = b.browser;
    url = b.url;
    closeBrowser = b.close;
  }, 120_000);

  afterAll(async () => {
    await closeBrowser?.();
    console.log(`softphone figures: ${JSON.stringify(figures)}`);
  });

  async function phonePage(userId: string, opts: { relay?: boolean; autoAnswer?: boolean; record?: boolean; phoneNumber?: string } = {}): Promise<{ page: Page; config: DialerConfig }> {
    const page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') console.log(`[browser] ${m.text()}`);
    });
    await page.goto(url);
    const config = bedCredentials(userId, { record: opts.record ?? false, ...(opts.phoneNumber ? { phoneNumber: opts.phoneNumber } : {}) });
    // A recorded call's rep hears the announcement from the browser (what CallPanel passes, from GET …/dialer/announcement).
    const announcement = opts.record ? await announcementBase64() : null;
    await page.evaluate(
      async ({ config, relay, autoAnswer, announcement }) => {
        const w = window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call; from: string };
        window.__events = [];
        const p = new window.cadenza.Softphone(config, {
          iceTransportPolicy: relay ? 'relay' : 'all',
          mediaTimeoutMs: 5000,
          ...(announcement ? { announcement: Uint8Array.from(atob(announcement), (ch) => ch.charCodeAt(0)).buffer } : {}),
          ...(autoAnswer
            ? {
                onIncoming: (incoming) => {
                  w.from = incoming.from;
                  w.call = incoming.answer((e) => window.__events.push(e));
                },
              }
            : {}),
        });
        (window as unknown as { phone: typeof p }).phone = p;
        await p.register();
      },
      { config, relay: opts.relay ?? false, autoAnswer: opts.autoAnswer ?? false, announcement },
    );
    return { page, config };
  }

  /** The bed's consent announcement (the WAV rtpengine plays), as the API serves it. */
  async function announcementBase64(): Promise<string> {
    return (await readFile((await bedEnv()).RECORDING_ANNOUNCEMENT!)).toString('base64');
  }

  /** What the rep's browser played of the consent announcement (Call.announced), once it finished. */
  const announcedToRep = (page: Page) => page.evaluate(() => (window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.announced);

  /** Starts a call in the page; its events collect in window.__events, the call in window.call. */
  async function dial(page: Page, number: string): Promise<void> {
    await page.evaluate((number) => {
      const w = window as unknown as { phone: import('../../web/src/dialer/softphone.ts').Softphone; call: import('../../web/src/dialer/softphone.ts').Call; t0: number };
      w.t0 = performance.now();
      window.__events = [];
      w.call = w.phone.call(number, (e) => window.__events.push({ ...e, ms: performance.now() - w.t0 } as CallProgressEvent));
    }, number);
  }

  async function waitEvent(page: Page, event: CallProgressEvent['event'], timeoutMs = 15_000): Promise<CallProgressEvent & { ms: number }> {
    await page.waitForFunction((event) => window.__events.some((e) => e.event === event), event, { timeout: timeoutMs });
    return (await page.evaluate((event) => window.__events.find((e) => e.event === event), event)) as CallProgressEvent & { ms: number };
  }

  const stats = (page: Page) => page.evaluate(() => (window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.stats());

  async function hangupAndWait(page: Page, uas: SippRun): Promise<void> {
    await page.evaluate(() => (window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.hangup());
    await waitEvent(page, 'ended');
    const r = await uas.done;
    expect(r.code, r.output).toBe(0);
  }

  afterEach(stopAllSipp);

  it('registers over WSS, calls, hears the prospect: media both ways through rtpengine, the tone received is the tone played', async () => {
    const uas = carrier('uas-answer-play.xml');
    const { page } = await phonePage('rep-browser-1');
    await dial(page, '+1 555 010 0001');
    const ringing = await waitEvent(page, 'ringing');
    const answered = await waitEvent(page, 'answered');
    figures.setupToRingingMs = Math.round(ringing.ms);
    figures.setupToAnsweredMs = Math.round(answered.ms);
    expect(ringing.sipCallId).toBeTruthy();
    await page.waitForTimeout(3000);
    // The prospect's 1000 Hz tone stands far above the spectrum's median; the rep's own 600 Hz does not come back.
    const [prospect, own] = await page.evaluate(
      ({ a, b }) => window.cadenza.toneLevels((window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.remoteStream!, [a, b], 1000),
      { a: TONES.prospectHz, b: TONES.browserHz },
    );
    figures.prospectToneDb = Math.round(prospect!);
    expect(prospect).toBeGreaterThan(30);
    expect(own).toBeLessThan(prospect! - 20);
    const s = await stats(page);
    figures.browserPacketsSent = s.packetsSent;
    figures.browserPacketsReceived = s.packetsReceived;
    expect(s.packetsSent).toBeGreaterThan(100);
    expect(s.packetsReceived).toBeGreaterThan(100);
    expect(s.codec).toMatch(/PCMU/i);
    // rtpengine's own count, both legs: the browser's (SRTP) and the carrier's (RTP).
    const rtp = await rtpengineCounts(RTP_NG_PORT, ringing.sipCallId!);
    expect(rtp.result).toBe('ok');
    figures.rtpengineLegPackets = rtp.legs.map((l) => l.packets).join('/');
    expect(rtp.legs.length).toBe(2);
    for (const leg of rtp.legs) expect(leg.packets).toBeGreaterThan(100);
    // DTMF as RFC 4733 events and mute change nothing in the call's state.
    await page.evaluate(() => (window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.sendDtmf('12#'));
    await hangupAndWait(page, uas);
    const ended = await waitEvent(page, 'ended');
    expect(ended.cause).toBe('local_hangup');
    await page.close();
  });

  it('echo: the carrier sends back what it hears; the rep hears their own tone, and the media round trip is measured', async () => {
    const uas = carrier('uas-answer-echo.xml', { echo: true });
    const { page } = await phonePage('rep-browser-2');
    await dial(page, '+15550100002');
    await waitEvent(page, 'answered');
    await page.waitForTimeout(2000);
    const [echoed] = await page.evaluate(
      ({ a }) => window.cadenza.toneLevels((window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.remoteStream!, [a], 1000),
      { a: TONES.browserHz },
    );
    expect(echoed).toBeGreaterThan(30);
    // Mouth to ear and back: mute, wait for silence, unmute, time until the tone returns.
    const rtts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const ms = await page.evaluate(async ({ hz }) => {
        const call = (window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call;
        call.setMuted(true);
        await new Promise((r) => setTimeout(r, 800));
        call.setMuted(false);
        return window.cadenza.waitForTone(call.remoteStream!, hz, 3000);
      }, { hz: TONES.browserHz });
      rtts.push(Math.round(ms));
    }
    figures.echoRoundTripMs = rtts.join('/');
    for (const r of rtts) expect(r).toBeGreaterThan(0);
    const s = await stats(page);
    if (s.roundTripMs !== undefined) figures.iceRttMs = Math.round(s.roundTripMs * 10) / 10;
    await hangupAndWait(page, uas);
    await page.close();
  });

  it('busy and no answer reach the browser with their causes', async () => {
    const { page } = await phonePage('rep-browser-3');
    let uas = carrier('uas-busy.xml');
    await dial(page, '+15550100003');
    const busy = await waitEvent(page, 'ended');
    expect(busy).toMatchObject({ cause: 'busy', status: 486 });
    expect((await uas.done).code).toBe(0);

    uas = carrier('uas-noanswer.xml');
    await dial(page, '+15550100004');
    await waitEvent(page, 'ringing');
    const rangOut = await waitEvent(page, 'ended', 10_000);
    expect(rangOut).toMatchObject({ cause: 'unavailable', status: 480 });
    expect(rangOut.ms).toBeGreaterThan(3500);
    expect((await uas.done).code).toBe(0);

    // The rep gives up while it rings: CANCEL, 487 from the carrier, the browser says cancelled.
    uas = carrier('uas-noanswer.xml');
    await dial(page, '+15550100005');
    await waitEvent(page, 'ringing');
    await page.evaluate(() => (window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.hangup());
    expect(await waitEvent(page, 'ended')).toMatchObject({ cause: 'cancelled' });
    expect((await uas.done).code).toBe(0);
    await page.close();
  });

  it('an incoming call from the trunk reaches the registered browser, which answers; the carrier hangs up', async () => {
    const { page } = await phonePage('rep-browser-7', { autoAnswer: true });
    const uac = inboundCall('rep-browser-7');
    await waitEvent(page, 'answered');
    expect(await page.evaluate(() => (window as unknown as { from: string }).from)).toBe('+15550109999');
    await page.waitForTimeout(2000);
    const [echoed] = await page.evaluate(
      ({ a }) => window.cadenza.toneLevels((window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.remoteStream!, [a], 1000),
      { a: TONES.browserHz },
    );
    expect(echoed).toBeGreaterThan(30);
    const ended = await waitEvent(page, 'ended');
    expect(ended.cause).toBe('remote_hangup');
    const r = await uac.done;
    expect(r.code, r.output).toBe(0);
    await page.close();
  });

  it("a call to a rep's DID rings that rep's browser, from either of the carrier's addresses; an unknown DID gets 404, and the same INVITE from an address that is not the carrier's is challenged, never delivered", async () => {
    const { page } = await phonePage('rep-browser-12', { autoAnswer: true, phoneNumber: '+442079460155' });
    // The carrier's second signalling address (telbed.sh TRUNK_SOURCE_NETS), the number without its '+', as carriers often send it.
    const uac = inboundCall('442079460155', { sourceIp: '127.0.0.4' });
    await waitEvent(page, 'answered');
    expect(await waitEvent(page, 'ended', 20_000)).toMatchObject({ cause: 'remote_hangup' });
    const r = await uac.done;
    expect(r.code, r.output).toBe(0);
    await page.close();

    const unknown = inboundCall('+442079460156', { timeoutMs: 5_000 });
    expect((await unknown.done).code).not.toBe(0);
    expect(sippMessages('uac-inbound.xml', unknown.proc.pid!)).toMatch(/^SIP\/2\.0 404 Not Found: no rep has this number/m);

    const stranger = inboundCall('+442079460155', { sourceIp: '127.0.0.3', timeoutMs: 5_000 });
    expect((await stranger.done).code).not.toBe(0);
    const msgs = sippMessages('uac-inbound.xml', stranger.proc.pid!);
    expect(msgs).toMatch(/^SIP\/2\.0 407/m);
    expect(msgs).not.toMatch(/^SIP\/2\.0 (180|200)/m);
  }, 60_000);

  it('voicemail: the greeting, then the beep', async () => {
    const uas = carrier('uas-voicemail.xml');
    const { page } = await phonePage('rep-browser-8');
    await dial(page, '+15550100009');
    await waitEvent(page, 'answered');
    const ms = await page.evaluate(
      ({ hz }) => window.cadenza.waitForTone((window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.remoteStream!, hz, 15_000, 30, 200),
      { hz: TONES.beepHz },
    );
    // The greeting is spoken first (espeak-ng, a few seconds), so the beep comes late, not at once.
    figures.voicemailBeepAfterAnswerMs = Math.round(ms);
    expect(ms).toBeGreaterThan(2000);
    await hangupAndWait(page, uas);
    await page.close();
  });

  it('relay only: media through coturn with a TURN credential from the same secret scheme', async () => {
    const uas = carrier('uas-answer-play.xml');
    const { page } = await phonePage('rep-browser-4', { relay: true });
    await dial(page, '+15550100006');
    await waitEvent(page, 'answered');
    await page.waitForTimeout(2500);
    const s = await stats(page);
    expect(s.localCandidateType).toBe('relay');
    expect(s.packetsSent).toBeGreaterThan(50);
    expect(s.packetsReceived).toBeGreaterThan(50);
    figures.relayPacketsReceived = s.packetsReceived;
    await hangupAndWait(page, uas);
    await page.close();
  });

  it('the CallPanel: Call, ringing, in call with a timer, Mute, Hang up, with accessible names', async () => {
    const uas = carrier('uas-answer-play.xml');
    const page = await browser.newPage();
    await page.addInitScript(
      ({ config, number }) => {
        window.__config = config;
        window.__number = number;
      },
      { config: bedCredentials('rep-browser-5'), number: '+15550100007' },
    );
    await page.goto(url);
    const group = page.getByRole('group', { name: 'Phone call to +15550100007' });
    await group.getByRole('status').filter({ hasText: 'Ready' }).waitFor();
    const t0 = Date.now();
    await group.getByRole('button', { name: 'Call +15550100007' }).click();
    await page.waitForFunction(() => window.__events.some((e) => e.event === 'ringing'));
    figures.panelClickToRingingMs = Date.now() - t0;
    await group.getByRole('status').filter({ hasText: /In call \d:\d\d/ }).waitFor();
    const mute = group.getByRole('button', { name: 'Mute the microphone' });
    await mute.click();
    expect(await group.getByRole('button', { name: 'Unmute the microphone' }).getAttribute('aria-pressed')).toBe('true');
    await group.getByRole('button', { name: 'Hang up the call to +15550100007' }).click();
    await group.getByRole('status').filter({ hasText: 'Call ended' }).waitFor();
    const events = await page.evaluate(() => window.__events.map((e) => e.event + (e.cause ? `:${e.cause}` : '')));
    expect(events).toEqual(['ringing', 'answered', 'ended:local_hangup']);
    expect((await uas.done).code).toBe(0);
    await page.close();
  });

  it('the CallPanel of a workspace that records, for a rep with a number: the caller ID, the badge, and the consent announcement played to the rep on answer', async () => {
    const uas = carrier('uas-answer-play.xml');
    const page = await browser.newPage();
    await page.addInitScript(
      ({ config, number, announcement }) => {
        window.__config = config;
        window.__number = number;
        window.__announcement = announcement;
      },
      { config: { ...bedCredentials('rep-browser-6', { record: true, phoneNumber: '+442079460166' }), recorded: true, phoneNumber: '+442079460166' }, number: '+15550100008', announcement: await announcementBase64() },
    );
    await page.goto(url);
    const group = page.getByRole('group', { name: 'Phone call to +15550100008' });
    await group.getByRole('status').filter({ hasText: 'Ready' }).waitFor();
    await group.getByText('Calls are recorded').waitFor();
    await group.getByText('Caller ID +442079460166').waitFor();
    await group.getByRole('button', { name: 'Call +15550100008' }).click();
    await group.getByText('Announcing the recording…').waitFor();
    await group.locator('[data-announcement="played"]').waitFor({ timeout: 10_000 });
    await group.getByText('Calls are recorded').waitFor();
    await group.getByRole('button', { name: 'Hang up the call to +15550100008' }).click();
    await group.getByRole('status').filter({ hasText: 'Call ended' }).waitFor();
    expect((await uas.done).code).toBe(0);
    await page.close();
  });

  /** A workspace that records calls, in a fresh store, and the ingester reading the bed's spool into it. */
  async function recordingWorkspace() {
    const env = await bedEnv();
    const store = await freshStore('pglite');
    const w = await seedWorkspace(store, 'Rec Co', 'rep@rec.test');
    await store.db.updateTable('workspace').set({ settings: JSON.stringify({ callRecording: true }) }).where('id', '=', w.workspaceId).execute();
    const vault = new Vault(store, localKeyWrapper(Buffer.alloc(32, 9)));
    const announcement = await loadAnnouncement(env.RECORDING_ANNOUNCEMENT!);
    /**
     * Ingests until a recording is stored (rtpengine writes the files as the call ends), up to 5 s.
     * `mixAnnouncement: false` stores the legs as captured, without the announcement the ingester
     * mixes in, so a test can see what the carrier itself sent back.
     */
    const ingestStored = async (mixAnnouncement = true): Promise<string[]> => {
      let stored: string[] = [];
      for (let i = 0; i < 20 && stored.length === 0; i++) {
        stored = (await ingestRecordings({ store, clock: systemClock, sealer: vault, spoolDir: env.RECORDING_DIR!, announcement: mixAnnouncement ? announcement : null }, { graceMs: 60_000 })).stored;
        if (!stored.length) await new Promise((r) => setTimeout(r, 250));
      }
      return stored;
    };
    const channelsOf = async (callId: string) => parseWav(new Uint8Array((await openRecording(store, vault, w.workspaceId, callId))!));
    /** The stored recording's two channels, checked: the rep's is channel 0, the prospect's channel 1. */
    const expectChannels = async (callId: string, label: string): Promise<void> => {
      const wav = await channelsOf(callId);
      figures[`${label}RecordingMs`] = Math.round(wav.durationMs);
      expect(wav.channels.length).toBe(2);
      const [rep, prospect] = wav.channels as [Float32Array, Float32Array];
      const a = announcement.length;
      // The announcement is the start of the prospect's channel, where rtpengine played it (under
      // the prospect's own tone, sipp playing on), and not in the rep's.
      const [inProspect, inRep] = [correlation(prospect.subarray(0, a), announcement), correlation(rep.subarray(0, a), announcement)];
      figures[`${label}AnnouncementCorrelation`] = `${inProspect.toFixed(2)}/${inRep.toFixed(2)}`;
      expect(inProspect).toBeGreaterThan(0.2);
      expect(Math.abs(inRep)).toBeLessThan(0.05);
      // After it, the prospect's channel carries the carrier's 1000 Hz and the rep's the browser's 600 Hz.
      const rest = (x: Float32Array) => x.subarray(a + 4000, Math.min(x.length, a + 12000));
      const [p1000, p600] = [toneEnergy(rest(prospect), TONES.prospectHz), toneEnergy(rest(prospect), TONES.browserHz)];
      const [r600, r1000] = [toneEnergy(rest(rep), TONES.browserHz), toneEnergy(rest(rep), TONES.prospectHz)];
      figures[`${label}RecordingToneRatios`] = `${Math.round(p1000 / p600)}/${Math.round(r600 / r1000)}`;
      expect(p1000).toBeGreaterThan(100 * p600);
      expect(r600).toBeGreaterThan(100 * r1000);
    };
    /**
     * The capture of a call whose prospect echoed what it heard, stored as it came (nothing mixed
     * in): the announcement in the prospect's channel is the one rtpengine played to the carrier,
     * sent back; the rep's channel has none of it.
     */
    const expectAnnouncementEchoed = async (callId: string, label: string): Promise<void> => {
      expect(await ingestStored(false)).toEqual([callId]);
      const [rep, prospect] = (await channelsOf(callId)).channels as [Float32Array, Float32Array];
      const [inProspect, inRep] = [bestCorrelation(prospect, announcement, 8000), bestCorrelation(rep, announcement, 8000)];
      figures[`${label}EchoedAnnouncement`] = `${inProspect.correlation.toFixed(2)} at ${Math.round(inProspect.lag / 8)} ms/${inRep.correlation.toFixed(2)}`;
      expect(inProspect.correlation).toBeGreaterThan(0.3);
      expect(inRep.correlation).toBeLessThan(0.1);
    };
    return { env, store, w, ingestStored, expectChannels, expectAnnouncementEchoed };
  }

  it("a recorded call: rtpengine records it and plays the consent announcement to the prospect, who hears it; the stored recording holds the announcement, the rep and the prospect; an unrecorded call leaves nothing", async () => {
    const { env, store, w, ingestStored, expectChannels, expectAnnouncementEchoed } = await recordingWorkspace();
    try {
      const placeCall = async (record: boolean, number: string, echo = false): Promise<string> => {
        const uas = echo ? carrier('uas-answer-echo.xml', { echo: true }) : carrier('uas-answer-play.xml');
        const { page } = await phonePage(w.userId, { record });
        await dial(page, number);
        const ringing = await waitEvent(page, 'ringing');
        await waitEvent(page, 'answered');
        if (!echo) {
          // The rep's line is not cut by the announcement played to the prospect: the prospect's
          // tone (held 600 ms) reaches the browser soon after the answer, recorded or not.
          const toneAfterMs = await page.evaluate(({ hz }) => window.cadenza.waitForTone((window as unknown as { call: import('../../web/src/dialer/softphone.ts').Call }).call.remoteStream!, hz, 10_000, 30, 600), { hz: TONES.prospectHz });
          toneDelays.push(Math.round(toneAfterMs));
        }
        // Longer than the announcement (2.9 s), so the recording has the line after it too.
        await page.waitForTimeout(5000);
        // The rep heard the announcement too, from the browser, whole and audible; nothing when not recorded.
        const heard = await announcedToRep(page);
        if (record) {
          expect(heard!.durationMs).toBeGreaterThan(2500);
          expect(heard!.levelDb).toBeGreaterThan(-35);
          figures.announcementToRep = `${Math.round(heard!.durationMs)} ms at ${heard!.levelDb.toFixed(1)} dBFS`;
        } else expect(heard).toBeNull();
        await hangupAndWait(page, uas);
        await page.close();
        await store.db.insertInto('phone_call').values({ id: randomUUID(), workspace_id: w.workspaceId, placed_by: w.userId, direction: 'outbound', source: 'dialer', state: 'ended', sip_call_id: ringing.sipCallId! }).execute();
        return ringing.sipCallId!;
      };

      const toneDelays: number[] = [];
      const plainId = await placeCall(false, '+15550100021');
      await new Promise((r) => setTimeout(r, 1500));
      expect(readdirSync(join(env.RECORDING_DIR!, 'pcaps')).filter((f) => f.startsWith(encodeURIComponent(plainId)))).toEqual([]);

      const recordedId = await placeCall(true, '+15550100022');
      figures.prospectToneAfterAnswerMs = toneDelays.join('/');
      for (const d of toneDelays) expect(d).toBeGreaterThan(0);
      const stored = await ingestStored();
      const call = await store.db.selectFrom('phone_call').select('id').where('sip_call_id', '=', recordedId).executeTakeFirstOrThrow();
      expect(stored).toEqual([call.id]);
      await expectChannels(call.id, 'outbound');
      expect(await store.db.selectFrom('phone_call_recording').select('call_id').execute()).toEqual([{ call_id: call.id }]);

      // The prospect heard the announcement: a carrier that echoes sends it back.
      const echoedId = await placeCall(true, '+15550100023', true);
      const echoed = await store.db.selectFrom('phone_call').select('id').where('sip_call_id', '=', echoedId).executeTakeFirstOrThrow();
      await expectAnnouncementEchoed(echoed.id, 'outbound');
    } finally {
      await store.close();
    }
  }, 90_000);

  it('a recorded incoming call: a rep registered with a recording credential is recorded when the carrier calls in; the announcement reaches the caller, the rep is channel 0', async () => {
    const { store, w, ingestStored, expectChannels, expectAnnouncementEchoed } = await recordingWorkspace();
    /** The carrier calls the rep, who answers; the carrier hangs up; the call is recorded as the softphone would report it. */
    const callIn = async (scenario: 'uac-inbound.xml' | 'uac-inbound-play.xml'): Promise<string> => {
      const { page } = await phonePage(w.userId, { autoAnswer: true, record: true });
      const uac = inboundCall(w.userId, { scenario });
      const answered = await waitEvent(page, 'answered');
      // The rep who answered hears the announcement the caller hears.
      const heard = await announcedToRep(page);
      expect(heard!.durationMs).toBeGreaterThan(2500);
      expect(heard!.levelDb).toBeGreaterThan(-35);
      expect(await waitEvent(page, 'ended', 20_000)).toMatchObject({ cause: 'remote_hangup' });
      const r = await uac.done;
      expect(r.code, r.output).toBe(0);
      await page.close();
      const id = randomUUID();
      await store.db.insertInto('phone_call').values({ id, workspace_id: w.workspaceId, placed_by: w.userId, direction: 'inbound', source: 'dialer', state: 'ended', sip_call_id: answered.sipCallId! }).execute();
      return id;
    };
    try {
      // The prospect plays its tone for 6 s: the channels are the rep's and the prospect's.
      const played = await callIn('uac-inbound-play.xml');
      expect(await ingestStored()).toEqual([played]);
      await expectChannels(played, 'inbound');

      // The prospect heard the announcement: a carrier that echoes sends it back.
      await expectAnnouncementEchoed(await callIn('uac-inbound.xml'), 'inbound');
    } finally {
      await store.close();
    }
  }, 90_000);

  it('rtpengine dies mid-call: the browser hangs up with cause media_lost', async () => {
    const uas = carrier('uas-answer-play.xml', { timeoutMs: 40_000 });
    const { page } = await phonePage('rep-browser-6');
    await dial(page, '+15550100008');
    await waitEvent(page, 'answered');
    await page.waitForTimeout(1500);
    const killedAt = Date.now();
    await telBed('stop-rtpengine');
    try {
      const ended = await waitEvent(page, 'ended', 20_000);
      figures.mediaLostDetectedMs = Date.now() - killedAt;
      expect(ended.cause).toBe('media_lost');
    } finally {
      await telBed('start-rtpengine');
      uas.stop();
      await uas.done;
      await page.close();
    }
  });
});

/** Normalised correlation of two equal-length signals (1: the same up to scale). */
function correlation(x: Float32Array, y: Float32Array): number {
  let xy = 0;
  let xx = 0;
  let yy = 0;
  for (let i = 0; i < Math.min(x.length, y.length); i++) [xy, xx, yy] = [xy + x[i]! * y[i]!, xx + x[i]! * x[i]!, yy + y[i]! * y[i]!];
  return xy / Math.sqrt(xx * yy || 1);
}

/** The highest correlation of `y` with `x` starting at any of the first `maxLag` samples of `x`. */
function bestCorrelation(x: Float32Array, y: Float32Array, maxLag: number): { correlation: number; lag: number } {
  let best = { correlation: -Infinity, lag: 0 };
  for (let lag = 0; lag <= Math.min(maxLag, x.length - 1); lag++) {
    const c = correlation(x.subarray(lag, lag + y.length), y);
    if (c > best.correlation) best = { correlation: c, lag };
  }
  return best;
}

/** The energy at one frequency in 8 kHz samples (Goertzel). */
function toneEnergy(x: Float32Array, hz: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / 8000);
  let [s1, s2] = [0, 0];
  for (const v of x) [s1, s2] = [v + k * s1 - s2, s1];
  return s1 * s1 + s2 * s2 - k * s1 * s2;
}
