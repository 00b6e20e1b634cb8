import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { issueSipCredentials, type SipCredentials } from '../../src/dialer/sip-credentials.ts';

/**
 * The telephony test bed (test/telephony/telbed.sh: Kamailio, rtpengine, coturn on 127.0.0.1) seen
 * from the tests: start it, issue credentials with the bed's secrets through the very function the
 * API uses, make the audio with espeak-ng and sox, and run sipp as the carrier or as a desk phone.
 */
const run = promisify(execFile);
const HERE = fileURLToPath(new URL('.', import.meta.url));
export const TELBED_SH = join(HERE, 'telbed.sh');
export const SIPP_DIR = join(HERE, 'sipp');
/** Where sipp runs (its traces and the audio it plays): test-results/telephony/ (gitignored). */
export const WORK_DIR = fileURLToPath(new URL('../../test-results/telephony/', import.meta.url));

/** The bed's values; the same defaults as telbed.sh (which any variable of the same name overrides). */
export const BED = {
  domain: process.env.SIP_DOMAIN ?? 'sip.telbed.test',
  sipUdpPort: Number(process.env.SIP_UDP_PORT ?? 25060),
  wsUrl: `ws://127.0.0.1:${process.env.SIP_WS_PORT ?? 25066}`,
  wssUrl: `wss://127.0.0.1:${process.env.SIP_WSS_PORT ?? 25067}`,
  trunkPort: Number((process.env.TRUNK_HOST ?? '127.0.0.1:25070').split(':')[1]),
  turnUrl: `turn:127.0.0.1:${process.env.TURN_PORT ?? 25478}?transport=udp`,
  sipSecret: process.env.TELBED_SIP_SECRET ?? 'telbed-sip-secret-for-tests-only',
  turnSecret: process.env.TELBED_TURN_SECRET ?? 'telbed-turn-secret-for-tests-only',
  /** The carrier's credentials Kamailio answers a challenge with (telbed.sh TRUNK_AUTH_*). */
  trunkUser: process.env.TRUNK_AUTH_USER ?? 'cadenza-trunk',
  trunkPassword: process.env.TRUNK_AUTH_PASSWORD ?? 'telbed-trunk-password',
};

const BINARIES: [string, string][] = [
  ['kamailio', 'kamailio kamailio-websocket-modules kamailio-tls-modules kamailio-autheph-modules'],
  ['rtpengine', 'rtpengine-daemon'],
  ['turnserver', 'coturn'],
  ['sipp', 'sip-tester'],
  ['espeak-ng', 'espeak-ng'],
  ['sox', 'sox'],
  ['envsubst', 'gettext-base'],
];

function onPath(bin: string): boolean {
  return (process.env.PATH ?? '/usr/bin:/bin').split(':').some((d) => d && existsSync(join(d, bin)));
}

/** Why the telephony tests must skip, or null when they must run. Never skips in CI (.ci/run installs the packages). */
export function telBedSkipReason(): string | null {
  if (process.env.CI) return null;
  const missing = BINARIES.filter(([b]) => !onPath(b) && !existsSync(`/usr/sbin/${b}`));
  if (missing.length) return `telephony bed: missing ${missing.map(([b]) => b).join(', ')} (apt-get install -y --no-install-recommends ${missing.map(([, p]) => p).join(' ')})`;
  return null;
}

export async function telBed(command: 'start' | 'stop' | 'status' | 'stop-rtpengine' | 'start-rtpengine'): Promise<string> {
  const { stdout } = await run('bash', [TELBED_SH, command], { timeout: 60_000 });
  return stdout;
}

/** Credentials for a rep, issued with the bed's secrets by the API's own function. */
export function bedCredentials(userId: string, opts: { ws?: 'ws' | 'wss'; nowMs?: number; ttlSeconds?: number; record?: boolean; phoneNumber?: string } = {}): SipCredentials {
  return issueSipCredentials(
    { wsUrl: opts.ws === 'ws' ? BED.wsUrl : BED.wssUrl, domain: BED.domain, sipSecret: BED.sipSecret, turnUrls: [BED.turnUrl], turnSecret: BED.turnSecret, ttlSeconds: opts.ttlSeconds ?? 3600 },
    userId,
    opts.nowMs ?? Date.now(),
    { record: opts.record ?? false, phoneNumber: opts.phoneNumber ?? null },
  );
}

/** The running bed's values from its env file (telbed.sh status): RECORDING_DIR, RECORDING_ANNOUNCEMENT… */
export async function bedEnv(): Promise<Record<string, string>> {
  const out = await telBed('status');
  return Object.fromEntries(out.split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

/** The tones the end-to-end tests listen for. */
export const TONES = { prospectHz: 1000, browserHz: 600, beepHz: 1400 };

/**
 * The audio of the calls, made here with espeak-ng and sox, nothing downloaded: prospect.pcmu (a
 * 1000 Hz tone, raw PCMU at 8 kHz, what the prospect "says"), voicemail.pcmu (a spoken greeting then
 * a 1400 Hz beep), browser.wav (the rep's microphone for Chromium's fake capture: a 600 Hz tone).
 */
export async function makeAudio(dir = WORK_DIR): Promise<{ dir: string; browserWav: string }> {
  mkdirSync(dir, { recursive: true });
  const p = (f: string) => join(dir, f);
  if (!existsSync(p('prospect.pcmu'))) await run('sox', ['-n', '-r', '8000', '-c', '1', '-t', 'ul', p('prospect.pcmu'), 'synth', '30', 'sine', String(TONES.prospectHz), 'vol', '0.5']);
  if (!existsSync(p('voicemail.pcmu'))) {
    await run('espeak-ng', ['-w', p('greeting-raw.wav'), "You have reached the prospect. Please leave a message after the tone."]);
    await run('sox', [p('greeting-raw.wav'), '-r', '8000', '-c', '1', p('greeting.wav')]);
    await run('sox', ['-n', '-r', '8000', '-c', '1', p('beep.wav'), 'synth', '0.5', 'sine', String(TONES.beepHz), 'vol', '0.5']);
    await run('sox', [p('greeting.wav'), p('beep.wav'), '-t', 'ul', p('voicemail.pcmu')]);
  }
  if (!existsSync(p('browser.wav'))) await run('sox', ['-n', '-r', '48000', '-c', '1', '-b', '16', p('browser.wav'), 'synth', '30', 'sine', String(TONES.browserHz), 'vol', '0.5']);
  return { dir, browserWav: p('browser.wav') };
}

export interface SippRun {
  /** Resolves when sipp exits: its exit code (0: every call succeeded) and its output. */
  done: Promise<{ code: number | null; output: string }>;
  proc: ChildProcess;
  stop(): void;
}

const running = new Set<ChildProcess>();

/** Kills every sipp still running (a failed test's carrier would hold the trunk port for the next). */
export async function stopAllSipp(): Promise<void> {
  const left = [...running];
  for (const p of left) p.kill('SIGKILL');
  await Promise.all(left.map((p) => (p.exitCode === null && p.signalCode === null ? new Promise((r) => p.once('exit', r)) : undefined)));
}

/** One sipp process in WORK_DIR, with its message trace and counts (-trace_msg, -trace_counts) there. */
export function sipp(args: string[], opts: { timeoutMs?: number } = {}): SippRun {
  mkdirSync(WORK_DIR, { recursive: true });
  const proc = spawn('sipp', [...args, '-nostdin', '-trace_err', '-trace_msg', '-trace_counts'], { cwd: WORK_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  let output = '';
  proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
  const done = new Promise<{ code: number | null; output: string }>((resolve) =>
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
  return { done, proc, stop: () => proc.kill('SIGTERM') };
}

/** The carrier: a sipp UAS at the bed's trunk address playing one scenario of test/telephony/sipp/. */
export function carrier(scenario: string, opts: { calls?: number; echo?: boolean; mediaPort?: number; timeoutMs?: number; keys?: Record<string, string> } = {}): SippRun {
  const args = [
    '-sf', join(SIPP_DIR, scenario), '-i', '127.0.0.1', '-p', String(BED.trunkPort),
    '-mi', '127.0.0.1', '-mp', String(opts.mediaPort ?? 26000), '-m', String(opts.calls ?? 1),
    ...Object.entries(opts.keys ?? {}).flatMap(([k, v]) => ['-key', k, v]),
  ];
  if (opts.echo) args.push('-rtp_echo');
  return sipp(args, opts);
}

/**
 * A rep's desk phone over UDP from 127.0.0.2 (not the trunk's address), authenticating with
 * ephemeral credentials (with the rep's trunk number signed in when given). `header` is one more
 * header line in its INVITEs (uac-call.xml's [header]), e.g. a caller ID it has no right to claim.
 */
export function deskPhone(scenario: string, number: string, userId: string, opts: { timeoutMs?: number; issuedAtMs?: number; phoneNumber?: string; header?: string } = {}): SippRun {
  const c = bedCredentials(userId, { nowMs: opts.issuedAtMs, ...(opts.phoneNumber ? { phoneNumber: opts.phoneNumber } : {}) });
  return sipp(
    [
      `127.0.0.1:${BED.sipUdpPort}`, '-sf', join(SIPP_DIR, scenario), '-i', '127.0.0.2', '-p', '25080', '-mi', '127.0.0.2', '-mp', '26100',
      '-s', number, '-key', 'rep', userId, '-key', 'domain', BED.domain, '-key', 'header', opts.header ?? 'Subject: a desk phone call',
      '-au', c.authorizationUser, '-ap', c.password, '-m', '1',
    ],
    opts,
  );
}

/**
 * The carrier calling a rep: a sipp UAC from the trunk's address (127.0.0.1) that echoes the rep's
 * audio (or, uac-inbound-cancel.xml, gives up while it rings; uac-inbound-play.xml, plays the
 * prospect's tone instead of echoing).
 */
export function inboundCall(to: string, opts: { timeoutMs?: number; scenario?: 'uac-inbound.xml' | 'uac-inbound-cancel.xml' | 'uac-inbound-play.xml'; sourceIp?: string } = {}): SippRun {
  const scenario = opts.scenario ?? 'uac-inbound.xml';
  const echo = scenario === 'uac-inbound-play.xml' ? [] : ['-rtp_echo'];
  // `to` is the request URI's user: a rep's user id, or a DID. The carrier's second address (127.0.0.4, telbed.sh TRUNK_SOURCE_NETS) or any other.
  const ip = opts.sourceIp ?? '127.0.0.1';
  return sipp(
    [`127.0.0.1:${BED.sipUdpPort}`, '-sf', join(SIPP_DIR, scenario), '-i', ip, '-p', String(BED.trunkPort + 1), '-mi', ip, '-mp', '26200', ...echo, '-key', 'rep', to, '-key', 'domain', BED.domain, '-m', '1'],
    opts,
  );
}

/** sipp's -trace_counts CSV of the latest run of a scenario: the last row as column -> number. */
export function sippCounts(scenario: string, pid: number): Record<string, number> {
  const base = scenario.replace(/\.xml$/, '');
  const file = readdirSync(WORK_DIR).find((f) => f === `${base}_${pid}_counts.csv`);
  if (!file) throw new Error(`no counts file for ${scenario} (pid ${pid}) in ${WORK_DIR}`);
  const lines = readFileSync(join(WORK_DIR, file), 'utf8').trim().split('\n');
  const head = lines[0]!.split(';');
  const last = lines[lines.length - 1]!.split(';');
  return Object.fromEntries(head.map((h, i) => [h, Number(last[i])]).filter(([h]) => h));
}

/** Every SIP message sipp sent or received in that run (its -trace_msg log). */
export function sippMessages(scenario: string, pid: number): string {
  const base = scenario.replace(/\.xml$/, '');
  return readFileSync(join(WORK_DIR, `${base}_${pid}_messages.log`), 'utf8');
}
