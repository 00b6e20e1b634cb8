/**
 * Synthetic two-leg calls for the transcription tests and bench: espeak-ng speaks a short
 * scripted call in the closed vocabulary of the test model (test/fixtures/asr), the rep on one
 * leg and the prospect on the other, at 8 kHz in the 300-3400 Hz band, as a phone line carries
 * it (sox makes the band; the test model was trained on that band only, see
 * docs/transcription.md). Not used in production; it needs the espeak-ng and sox binaries.
 *
 * The voices are ones the test model never heard in training (en-029 with the m4/f3 variants,
 * see scripts/asr/train.py), so a WER measured here is on held-out speakers.
 */
import { spawnSync } from 'node:child_process';
import { seededRandom } from '../../common/random.js';
import { parseWav } from './wav.js';
import type { Speaker } from './turns.js';

export const CALL_RATE = 8000;

export interface ScriptedLine {
  readonly speaker: Speaker;
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
}

export interface SyntheticCall {
  readonly rep: Float32Array;
  readonly prospect: Float32Array;
  readonly sampleRate: number;
  readonly lines: readonly ScriptedLine[];
}

export interface Voice {
  readonly voice: string;
  readonly speed: number;
  readonly pitch: number;
}

export const HELD_OUT_VOICES: Record<Speaker, Voice> = {
  rep: { voice: 'en-029+m4', speed: 158, pitch: 45 },
  prospect: { voice: 'en-029+f3', speed: 168, pitch: 55 },
};

export function espeakAvailable(): boolean {
  return spawnSync('espeak-ng', ['--version'], { stdio: 'ignore' }).status === 0 && spawnSync('sox', ['--version'], { stdio: 'ignore' }).status === 0;
}

const NAMES = ['alice', 'bob', 'maria', 'james', 'priya', 'chen'];
const DIGITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const DAYS = ['monday', 'friday', 'tomorrow'];

/** A short call script, the same for the same seed. */
export function callScript(seed: number): { speaker: Speaker; text: string }[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[rnd.int(0, xs.length - 1)]!;
  const digits = (n: number): string => Array.from({ length: n }, () => pick(DIGITS)).join(' ');
  const rep = pick(NAMES);
  const prospect = pick(NAMES.filter((n) => n !== rep));
  const day = pick(DAYS);
  return [
    { speaker: 'rep', text: `hello this is ${rep} calling from cadenza` },
    { speaker: 'prospect', text: `hi ${rep}` },
    { speaker: 'rep', text: `can we talk ${day}` },
    { speaker: 'prospect', text: `yes ${day} works` },
    { speaker: 'rep', text: `great thanks ${prospect}` },
    { speaker: 'prospect', text: `call me back at ${digits(rnd.int(3, 6))}` },
    { speaker: 'rep', text: 'thanks for your time goodbye' },
  ];
}

function speak(text: string, v: Voice): Float32Array {
  const r = spawnSync('espeak-ng', ['-v', v.voice, '-s', String(v.speed), '-p', String(v.pitch), '--stdout', text], { maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`espeak-ng failed: ${r.stderr.toString()}`);
  // The phone band: 8 kHz, 300-3400 Hz.
  const line = spawnSync('sox', ['-t', 'wav', '-', '-t', 'wav', '-e', 'signed-integer', '-b', '16', '-c', '1', '-', 'rate', String(CALL_RATE), 'sinc', '300-3400'], { input: r.stdout, maxBuffer: 64 * 1024 * 1024 });
  if (line.status !== 0) throw new Error(`sox failed: ${line.stderr.toString()}`);
  return parseWav(line.stdout, { sampleRates: [CALL_RATE], maxChannels: 1, maxBytes: 64 * 1024 * 1024, maxDurationMs: 60_000 }).channels[0]!;
}

/** Speaks the script turn by turn: each line on its speaker's leg, silence on the other. */
export function synthesizeCall(seed: number, voices: Record<Speaker, Voice> = HELD_OUT_VOICES): SyntheticCall {
  const rnd = seededRandom(seed * 7919 + 1);
  const script = callScript(seed);
  const pieces = script.map((l) => ({ ...l, audio: speak(l.text, voices[l.speaker]) }));
  const gap = (): number => Math.round((0.3 + rnd.next() * 0.5) * CALL_RATE);
  const lead = Math.round(0.5 * CALL_RATE);
  const total = lead + pieces.reduce((n, p) => n + p.audio.length + Math.round(0.8 * CALL_RATE), 0) + CALL_RATE;
  const legs: Record<Speaker, Float32Array> = { rep: new Float32Array(total), prospect: new Float32Array(total) };
  const lines: ScriptedLine[] = [];
  let at = lead;
  for (const p of pieces) {
    legs[p.speaker].set(p.audio, at);
    lines.push({ speaker: p.speaker, text: p.text, startMs: (at / CALL_RATE) * 1000, endMs: ((at + p.audio.length) / CALL_RATE) * 1000 });
    at += p.audio.length + gap();
  }
  // Faint line noise on both legs, deterministic.
  for (const leg of [legs.rep, legs.prospect]) {
    for (let i = 0; i < leg.length; i++) leg[i] = leg[i]! + (rnd.next() - 0.5) * 0.002;
  }
  const end = at + CALL_RATE;
  return { rep: legs.rep.subarray(0, end), prospect: legs.prospect.subarray(0, end), sampleRate: CALL_RATE, lines };
}
