import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { BED, carrier, deskPhone, sippCounts, sippMessages, stopAllSipp, telBedSkipReason } from './telbed.ts';

/**
 * SIP signalling through the bed's Kamailio with sipp at both ends: a rep's desk phone over UDP
 * (ephemeral credentials, digest challenge) calls through Kamailio's trunk side to the "carrier".
 * Record-Route and loose_route carry the ACK of the 200 OK to the carrier, so the carrier never
 * retransmits its 200 OK (RFC 3261 13.3.1.4); busy and no-answer come back with their own codes.
 */
const skip = telBedSkipReason();

describe.skipIf(skip !== null)(`SIP through Kamailio, sipp at both ends${skip ? ` (skipped: ${skip})` : ''}`, () => {
  afterEach(stopAllSipp);

  it('sets a call up and tears it down; the ACK reaches the carrier, which retransmits nothing', async () => {
    const uas = carrier('uas-answer-echo.xml', { echo: true });
    await new Promise((r) => setTimeout(r, 300));
    const uac = deskPhone('uac-call.xml', '15550001111', 'rep-sipp-1');
    const [a, b] = await Promise.all([uac.done, uas.done]);
    expect(a.code, a.output).toBe(0);
    expect(b.code, b.output).toBe(0);
    const carrierSide = sippCounts('uas-answer-echo.xml', uas.proc.pid!);
    expect(carrierSide['3_200_Sent']).toBe(1);
    expect(carrierSide['3_200_Retrans']).toBe(0);
    expect(carrierSide['4_ACK_Recv']).toBe(1);
    expect(carrierSide['5_BYE_Recv']).toBe(1);
    const phoneSide = sippCounts('uac-call.xml', uac.proc.pid!);
    expect(phoneSide['2_407_Recv']).toBe(1); // challenged once, then admitted with the ephemeral credential
    expect(phoneSide['8_200_Recv']).toBe(1);
    expect(phoneSide['8_200_Retrans']).toBe(0);
    // The carrier saw media anchored in rtpengine (its port range), and Kamailio in the route set.
    const msgs = sippMessages('uas-answer-echo.xml', uas.proc.pid!);
    expect(msgs).toMatch(/^Record-Route: <sip:127\.0\.0\.1:\d+;lr/m);
    expect(msgs).toMatch(/^m=audio 30[0-4]\d\d RTP\/AVP 0/m);
  });

  it("caller ID: a rep with a trunk number calls out as that number (From and P-Asserted-Identity, from the signed credential only); the rep's side keeps its own From", async () => {
    const uas = carrier('uas-answer-echo.xml', { echo: true });
    await new Promise((r) => setTimeout(r, 300));
    // The desk phone claims someone else's number in a P-Asserted-Identity of its own: dropped.
    const uac = deskPhone('uac-call.xml', '15550001112', 'rep-sipp-5', { phoneNumber: '+442079460123', header: 'P-Asserted-Identity: <sip:+15559999999@sip.telbed.test>' });
    const [a, b] = await Promise.all([uac.done, uas.done]);
    expect(a.code, a.output).toBe(0);
    expect(b.code, b.output).toBe(0);
    const atCarrier = sippMessages('uas-answer-echo.xml', uas.proc.pid!);
    const invite = atCarrier.slice(atCarrier.indexOf('INVITE sip:'));
    const headers = invite.slice(0, invite.search(/\r?\n\r?\n/));
    expect(headers).toMatch(/^From: <sip:\+442079460123@sip\.telbed\.test>;tag=/m);
    expect(headers.match(/^P-Asserted-Identity: .*$/gm)).toEqual(['P-Asserted-Identity: <sip:+442079460123@sip.telbed.test>']);
    expect(headers).not.toMatch(/^(From|P-Asserted-Identity): .*rep-sipp-5/m);
    // What comes back to the phone carries the From it sent (uac restores it), so its dialog holds.
    const atPhone = sippMessages('uac-call.xml', uac.proc.pid!);
    const ok = atPhone.slice(atPhone.lastIndexOf('SIP/2.0 200 OK'));
    expect(ok).toMatch(/^From: <sip:rep-sipp-5@sip\.telbed\.test>;tag=/m);

    // A credential without a number: the From stays the user, and no claimed identity gets through.
    const uas2 = carrier('uas-answer-echo.xml', { echo: true });
    await new Promise((r) => setTimeout(r, 300));
    const plain = deskPhone('uac-call.xml', '15550001113', 'rep-sipp-6', { header: 'P-Asserted-Identity: <sip:+15559999999@sip.telbed.test>' });
    const [c, d] = await Promise.all([plain.done, uas2.done]);
    expect(c.code, c.output).toBe(0);
    expect(d.code, d.output).toBe(0);
    const second = sippMessages('uas-answer-echo.xml', uas2.proc.pid!);
    const invite2 = second.slice(second.indexOf('INVITE sip:'));
    expect(invite2.slice(0, invite2.search(/\r?\n\r?\n/))).not.toMatch(/P-Asserted-Identity|\+15559999999/);
  });

  it("a credential trunk: the carrier's challenge is answered with the trunk's credentials, once; wrong credentials end in 503 for the rep, never a loop", async () => {
    const trunk = { trunk_user: BED.trunkUser, trunk_password: BED.trunkPassword };
    const uas = carrier('uas-auth-answer.xml', { echo: true, keys: trunk });
    await new Promise((r) => setTimeout(r, 300));
    const uac = deskPhone('uac-call.xml', '15550001114', 'rep-sipp-7', { phoneNumber: '+442079460177' });
    const [a, b] = await Promise.all([uac.done, uas.done]);
    expect(a.code, a.output).toBe(0);
    expect(b.code, b.output).toBe(0);
    const atCarrier = sippMessages('uas-auth-answer.xml', uas.proc.pid!);
    // Two INVITEs reached the carrier: the second with the trunk's digest, still with the rep's caller ID and rtpengine's media.
    const invites = atCarrier.split(/^(?=INVITE sip:)/m).slice(1);
    expect(invites.length).toBe(2);
    expect(invites[1]).toMatch(new RegExp(`^Authorization: Digest username="${BED.trunkUser}", realm="carrier\\.telbed\\.test"`, 'm'));
    expect(invites[1]).toMatch(/^From: <sip:\+442079460177@/m);
    expect(invites[1]).toMatch(/^m=audio 30[0-4]\d\d RTP\/AVP/m);
    expect(sippCounts('uac-call.xml', uac.proc.pid!)['8_200_Recv']).toBe(1);

    // The carrier does not know these credentials: challenged again, and the rep gets 503.
    const wrong = carrier('uas-auth-answer.xml', { echo: true, keys: { ...trunk, trunk_password: 'not-the-password' } });
    await new Promise((r) => setTimeout(r, 300));
    const refused = deskPhone('uac-call.xml', '15550001115', 'rep-sipp-8', { timeoutMs: 8_000 });
    const [c, d] = await Promise.all([refused.done, wrong.done]);
    expect(c.code).not.toBe(0);
    expect(d.code, d.output).toBe(0);
    expect(sippMessages('uac-call.xml', refused.proc.pid!)).toMatch(/^SIP\/2\.0 503 Service Unavailable: the carrier refused the trunk's credentials/m);
    expect(sippMessages('uas-auth-answer.xml', wrong.proc.pid!).split(/^(?=INVITE sip:)/m).length - 1).toBe(2);
  });

  it('a busy line gives the caller 486', async () => {
    const uas = carrier('uas-busy.xml');
    await new Promise((r) => setTimeout(r, 300));
    const uac = deskPhone('uac-busy.xml', '15550002222', 'rep-sipp-2');
    const [a, b] = await Promise.all([uac.done, uas.done]);
    expect(a.code, a.output).toBe(0);
    expect(b.code, b.output).toBe(0);
    expect(sippCounts('uac-busy.xml', uac.proc.pid!)['8_486_Recv']).toBe(1);
  });

  it('no answer: it rings, then the caller gets 480', async () => {
    const uas = carrier('uas-noanswer.xml');
    await new Promise((r) => setTimeout(r, 300));
    const uac = deskPhone('uac-noanswer.xml', '15550003333', 'rep-sipp-3');
    const [a, b] = await Promise.all([uac.done, uas.done]);
    expect(a.code, a.output).toBe(0);
    expect(b.code, b.output).toBe(0);
    const c = sippCounts('uac-noanswer.xml', uac.proc.pid!);
    expect(c['6_180_Recv']).toBe(1);
    expect(c['8_480_Recv']).toBe(1);
  });

  it('refuses a credential past its expiry: challenged again, never relayed', async () => {
    // A desk phone with a credential issued two hours ago for one hour: auth_ephemeral checks the expiry in the username.
    const uac = deskPhone('uac-call.xml', '15550004444', 'rep-sipp-4', { timeoutMs: 4_000, issuedAtMs: Date.now() - 2 * 3600_000 });
    const a = await uac.done;
    expect(a.code).not.toBe(0);
    const msgs = sippMessages('uac-call.xml', uac.proc.pid!);
    expect(msgs.match(/^SIP\/2\.0 407/gm)?.length).toBeGreaterThanOrEqual(2);
    expect(msgs).not.toMatch(/^SIP\/2\.0 (100|180|200)/m);
  });

  it("the production template with kamailio-local.cfg.example's values passes Kamailio's own check (the Origin allowlist branch included)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kamailio-example-'));
    try {
      const tpl = fileURLToPath(new URL('../../deploy/telephony/', import.meta.url));
      copyFileSync(join(tpl, 'kamailio.cfg'), join(dir, 'kamailio.cfg'));
      copyFileSync(join(tpl, 'kamailio-local.cfg.example'), join(dir, 'kamailio-local.cfg'));
      const { stdout, stderr } = await promisify(execFile)('kamailio', ['-c', '-f', join(dir, 'kamailio.cfg')], { timeout: 20_000 });
      expect(stdout + stderr).toMatch(/tls: 203\.0\.113\.10 \[203\.0\.113\.10\]:8443/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
