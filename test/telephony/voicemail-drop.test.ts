import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import { seededRandom } from '../../src/common/random.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { EnrollmentService } from '../../src/sequence/enrollment-service.ts';
import { chromiumSkipReason, screenshot } from '../web/chromium.ts';
import { dialerWebSuite } from './browser.ts';
import { rtpengineCounts } from './ng.ts';
import { WORK_DIR, carrier, inboundCall, stopAllSipp, telBedSkipReason } from './telbed.ts';
import { zoneAtHour } from '../zone-at-hour.ts';

/**
 * Voicemail drop and incoming calls in the real web app over the telephony bed (docs/dialer.md).
 * 1. The rep uploads their message (an 8 s, 800 Hz tone made by sox: not the microphone's 600 Hz),
 *    calls a lead, sipp answers with the voicemail greeting and beep, the rep presses v: the clip
 *    replaces the microphone in the call (rtpengine keeps counting the browser leg's packets, the
 *    sender's source carries audio energy), the call is logged voicemail with the note, and the
 *    rep places the next call while the clip still plays; the softphone hangs up the first call
 *    itself when the clip ends.
 * 2. The carrier calls the rep: the panel names the lead the number matches, the rep answers and
 *    logs an outcome; a caller who gives up while it rings leaves a missed call. Screenshots
 *    voicemail-drop-01..02.
 */
const skip = telBedSkipReason() ?? chromiumSkipReason();
const RTP_NG_PORT = Number(process.env.RTP_NG_PORT ?? 25223);

describe.skipIf(skip !== null)(`voicemail drop and incoming calls in the web app${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = dialerWebSuite('vmdrop');
  let page: Page;
  let workspaceId: string;
  const db = () => web.app.store.db;
  const leads = { ana: '00000000-0000-4000-8000-00000000db01', bo: '00000000-0000-4000-8000-00000000db02', cy: '00000000-0000-4000-8000-00000000db03' };
  const phones = { ana: '+14155550130', bo: '+14155550131', cy: '+15550109999' };
  const clipWav = join(WORK_DIR, 'voicemail-drop-clip.wav');

  beforeAll(async () => {
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', clipWav, 'synth', '8', 'sine', '800', 'vol', '0.5']);
    page = await web.newPage();
    // Every peer connection the softphone makes, for the test to read its stats and senders.
    await page.addInitScript(() => {
      const Orig = window.RTCPeerConnection;
      const w = window as unknown as { __pcs: RTCPeerConnection[] };
      w.__pcs = [];
      window.RTCPeerConnection = class extends Orig {
        constructor(c?: RTCConfiguration) {
          super(c);
          w.__pcs.push(this);
        }
      } as typeof RTCPeerConnection;
    });
    await web.setupOwner(page, { email: 'rep@vmdrop.test', password: 'a long enough password', workspace: 'Drop Co' });
    workspaceId = (await db().selectFrom('workspace').select('id').executeTakeFirstOrThrow()).id;
    const zone = zoneAtHour(12);
    for (const [name, id] of Object.entries(leads)) {
      const email = `${name}@prospect.test`;
      const e164 = phones[name as keyof typeof phones];
      await db()
        .insertInto('lead')
        .values({ id, workspace_id: workspaceId, email, email_norm: email, first_name: name === 'cy' ? 'Cyrus' : name, last_name: name === 'cy' ? 'Caller' : null, company: name === 'cy' ? 'Inbound Ltd' : 'Acme', phone: e164, phone_e164: e164, phone_status: 'valid', time_zone: zone })
        .execute();
    }
    const deps = { clock: systemClock, random: seededRandom('vmdrop') };
    const def = validateDefinition({ key: 'calls', name: 'Calls first', window: 'any', jitter_minutes: 0, steps: [{ key: 'call', type: 'call', title: 'Intro call' }] });
    const seq = await applyDefinition(web.app.store, deps, workspaceId, def);
    // One at a time, so the dialer takes them in this order.
    for (const id of [leads.ana, leads.bo, leads.cy]) {
      await bulkEnroll(web.app.store, deps, { workspaceId, sequenceId: seq.sequenceId, leadIds: [id] });
      await new EnrollmentService({ store: web.app.store, ...deps }).fireDue(10);
      await new Promise((r) => setTimeout(r, 20));
    }
  }, 120_000);

  const callsOf = (leadId: string) => db().selectFrom('phone_call').selectAll().where('lead_id', '=', leadId).orderBy('created_at').execute();
  /** The first call's audio sender: which track, and its source's audio energy and packets so far. */
  const sender = (i: number) =>
    page.evaluate(async (i) => {
      const pc = (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs[i]!;
      const s = pc.getSenders().find((x) => x.track?.kind === 'audio') ?? pc.getSenders()[0]!;
      let energy = 0;
      let sent = 0;
      (await pc.getStats()).forEach((r: Record<string, unknown>) => {
        if (r.type === 'media-source' && r.kind === 'audio') energy = Number(r.totalAudioEnergy ?? 0);
        if (r.type === 'outbound-rtp' && r.kind === 'audio') sent = Number(r.packetsSent ?? 0);
      });
      return { trackId: s.track?.id ?? null, live: s.track?.readyState === 'live', energy, sent, state: pc.connectionState };
    }, i);

  it('drops the recorded voicemail after the greeting, logs it, and places the next call while it plays', async () => {
    const uas = carrier('uas-voicemail.xml', { calls: 2, timeoutMs: 60_000 });
    try {
      await page.getByRole('link', { name: 'Tasks' }).click();
      const dialer = page.getByRole('region', { name: 'Power dialer' });
      await dialer.getByText('call 1 of 3 due now').waitFor();
      // The message, uploaded once and listened back to.
      await dialer.getByText(/^Voicemail message/).click();
      await dialer.locator('input[type=file]').setInputFiles(clipWav);
      await dialer.getByRole('button', { name: 'Save' }).click();
      await dialer.getByText('Voicemail message (8 s, saved)').waitFor({ timeout: 10_000 });

      const panel = dialer.getByRole('group', { name: `Phone call to ${phones.ana}` });
      await panel.getByText('Ready').waitFor({ timeout: 20_000 });
      await page.keyboard.press('c');
      await panel.getByText(/^In call/).waitFor({ timeout: 20_000 });
      // The greeting (espeak-ng, about 4 s) and the beep play; the rep drops after them.
      await page.waitForTimeout(5000);
      const before = await sender(0);
      await page.keyboard.press('v');
      // Logged as voicemail at once, and the dialer is on the next lead while the clip plays.
      await dialer.getByText('call 1 of 2 due now').waitFor({ timeout: 10_000 });
      const [first] = await callsOf(leads.ana);
      expect(first).toMatchObject({ outcome: 'voicemail', state: 'ended' });
      expect(first!.notes).toBe('Voicemail dropped (recorded message, 8 s).');
      await dialer.getByText(`Voicemail playing to ${phones.ana}`).waitFor();
      await screenshot(page, 'voicemail-drop-01-playing');

      // The clip, not the microphone, goes out: another track, with audio in it, packets flowing.
      await page.waitForTimeout(1000);
      const a = await sender(0);
      await page.waitForTimeout(1000);
      const b = await sender(0);
      expect(a.trackId).not.toBe(before.trackId);
      expect(a.live).toBe(true);
      expect(b.energy).toBeGreaterThan(a.energy);
      expect(b.sent - a.sent).toBeGreaterThan(30);
      const rtp1 = await rtpengineCounts(RTP_NG_PORT, first!.sip_call_id!);
      expect(rtp1.result).toBe('ok');

      // The next call while the clip still plays: the panel's own call is Bo's.
      const next = dialer.getByRole('group', { name: `Phone call to ${phones.bo}` });
      await next.getByText('Ready').waitFor({ timeout: 5000 });
      await page.keyboard.press('c');
      await next.getByText(/^In call/).waitFor({ timeout: 20_000 });
      await page.waitForTimeout(1500);
      const rtp2 = await rtpengineCounts(RTP_NG_PORT, first!.sip_call_id!);
      const browserLeg = (r: typeof rtp1) => Math.max(...r.legs.map((l) => l.packets));
      // rtpengine still takes the first call's clip from the browser and forwards it to the carrier.
      expect(browserLeg(rtp2), JSON.stringify([rtp1, rtp2])).toBeGreaterThan(browserLeg(rtp1) + 20);
      expect((await sender(0)).state).toBe('connected');
      await next.getByRole('button', { name: `Hang up the call to ${phones.bo}` }).click();
      await dialer.getByText('Outcome: the call suggests connected').waitFor({ timeout: 10_000 });
      await page.keyboard.press('2');
      await dialer.getByText('call 1 of 1 due now').waitFor({ timeout: 10_000 });
      // The first call ends by itself when the clip has played: sipp gets both BYEs.
      const r = await uas.done;
      expect(r.code, r.output).toBe(0);
      await dialer.getByText(`Voicemail playing to ${phones.ana}`).waitFor({ state: 'detached', timeout: 10_000 });
      console.log(`voicemail drop: rtpengine browser leg ${browserLeg(rtp1)} -> ${browserLeg(rtp2)} packets, source energy ${a.energy.toFixed(3)} -> ${b.energy.toFixed(3)}`);
    } finally {
      uas.stop();
      await stopAllSipp();
    }
  }, 120_000);

  it('an incoming call shows the matched lead; the rep answers and logs an outcome', async () => {
    const rep = await db().selectFrom('app_user').select('id').where('email', '=', 'rep@vmdrop.test').executeTakeFirstOrThrow();
    const uac = inboundCall(rep.id, { timeoutMs: 40_000 });
    try {
      const card = page.getByRole('region', { name: 'Incoming call' });
      await card.getByText('Cyrus Caller').waitFor({ timeout: 20_000 });
      await card.getByText('Inbound Ltd').waitFor();
      await screenshot(page, 'voicemail-drop-02-incoming');
      await card.getByRole('button', { name: `Answer the call from ${phones.cy}` }).click();
      await card.getByText('In call with').waitFor({ timeout: 10_000 });
      // The carrier hangs up after 4 s; the outcome is logged on the inbound call.
      await card.getByText('Call ended').waitFor({ timeout: 15_000 });
      const dialer = page.getByRole('region', { name: 'Power dialer' });
      await dialer.getByLabel('Notes').fill('Called back about the proposal');
      await dialer.getByRole('button', { name: 'Connected' }).click();
      await card.waitFor({ state: 'detached', timeout: 10_000 });
      const calls = await callsOf(leads.cy);
      const inbound = calls.find((c) => c.direction === 'inbound')!;
      expect(inbound).toMatchObject({ state: 'ended', outcome: 'connected', notes: 'Called back about the proposal', remote_e164: phones.cy, placed_by: rep.id });
      expect(inbound.answered_at).not.toBeNull();
      const r = await uac.done;
      expect(r.code, r.output).toBe(0);
    } finally {
      uac.stop();
      await stopAllSipp();
    }
  }, 90_000);

  it('an incoming call the caller gives up on while it rings is recorded as missed', async () => {
    const rep = await db().selectFrom('app_user').select('id').where('email', '=', 'rep@vmdrop.test').executeTakeFirstOrThrow();
    const uac = inboundCall(rep.id, { scenario: 'uac-inbound-cancel.xml', timeoutMs: 30_000 });
    try {
      const card = page.getByRole('region', { name: 'Incoming call' });
      await card.getByText('Cyrus Caller').waitFor({ timeout: 20_000 });
      await card.getByText('Missed call').waitFor({ timeout: 15_000 });
      const r = await uac.done;
      expect(r.code, r.output).toBe(0);
      await card.getByRole('button', { name: 'Dismiss' }).click();
      await card.waitFor({ state: 'detached' });
      const inbound = (await callsOf(leads.cy)).filter((c) => c.direction === 'inbound');
      expect(inbound).toHaveLength(2);
      expect(inbound[1]).toMatchObject({ state: 'ended', answered_at: null, end_cause: 'canceled', suggested: 'no_answer', placed_by: rep.id });
      expect(web.errors).toEqual([]);
    } finally {
      uac.stop();
      await stopAllSipp();
    }
  }, 60_000);

  it('away from the power dialer, an incoming call rings in the dock on any screen; the rep answers there and logs its outcome', async () => {
    const rep = await db().selectFrom('app_user').select('id').where('email', '=', 'rep@vmdrop.test').executeTakeFirstOrThrow();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Leads' }).waitFor();
    expect(await page.getByRole('region', { name: 'Power dialer' }).count()).toBe(0);
    // The dock's phone registered (hidden until a call rings), the dialer's is gone.
    const dock = page.locator('aside[aria-label="Phone"]');
    await dock.locator('.call-panel[data-state="ready"]').waitFor({ state: 'attached', timeout: 20_000 });
    expect(await dock.isHidden()).toBe(true);
    const uac = inboundCall(rep.id, { timeoutMs: 40_000 });
    try {
      const card = dock.getByRole('region', { name: 'Incoming call' });
      await card.getByText('Cyrus Caller').waitFor({ timeout: 20_000 });
      await screenshot(page, 'voicemail-drop-03-dock');
      await card.getByRole('button', { name: `Answer the call from ${phones.cy}` }).click();
      await card.getByText('In call with').waitFor({ timeout: 10_000 });
      await dock.getByRole('button', { name: /^Hang up/ }).waitFor();
      await card.getByText('Call ended').waitFor({ timeout: 15_000 });
      await dock.getByLabel('Notes').fill('Rang back from the leads list');
      await dock.getByRole('button', { name: 'Connected' }).click();
      await dock.waitFor({ state: 'hidden', timeout: 10_000 });
      const inbound = (await callsOf(leads.cy)).filter((c) => c.direction === 'inbound');
      expect(inbound).toHaveLength(3);
      expect(inbound[2]).toMatchObject({ state: 'ended', outcome: 'connected', notes: 'Rang back from the leads list', placed_by: rep.id });
      expect(inbound[2]!.answered_at).not.toBeNull();
      const r = await uac.done;
      expect(r.code, r.output).toBe(0);
      expect(web.errors).toEqual([]);
    } finally {
      uac.stop();
      await stopAllSipp();
    }
  }, 90_000);
});
