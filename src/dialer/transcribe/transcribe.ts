/**
 * transcribeCall: a call recording in, words with times per speaker and speaker turns out.
 *
 * Made for a durable job queue to call after the call record is saved (the call never waits for
 * it): the function is idempotent (same recording and model, same transcript), holds no state
 * between calls but the loaded model, and fails in one of two ways the queue can tell apart:
 * RECORDING_INVALID (the input is wrong; retrying will not help: mark the transcript failed) or
 * anything else (the model or the machine; retry with backoff, then mark it failed).
 *
 * Each leg of the call (the rep's line, the prospect's line) is one speaker: either the two
 * channels of one stereo WAV, or two WAV files. Each leg is fed to its own sherpa-onnx stream in
 * 100 ms chunks, as a live call would be, and decoded as soon as a chunk of features is ready;
 * the event loop gets a turn every `yieldEveryMs` of audio, since each decode step is synchronous
 * native code.
 */
import { readFile, stat } from 'node:fs/promises';
import { setImmediate as turn } from 'node:timers/promises';
import { cadenzaError } from '../../common/errors.js';
import type { LoadedModel } from './model.js';
import { mergeTurns, type Speaker, type SpeakerWord, type Turn } from './turns.js';
import { DEFAULT_WAV_LIMITS, parseWav, type Wav, type WavLimits } from './wav.js';
import { tokensToWords } from './words.js';

/** A WAV file's bytes, or a path to one. */
export type WavSource = Uint8Array | { readonly path: string };

export type CallRecording =
  | { readonly kind: 'stereo'; readonly wav: WavSource; /** which channel is the rep's; 0 (left) by default */ readonly repChannel?: 0 | 1 }
  | { readonly kind: 'two-files'; readonly rep: WavSource; readonly prospect: WavSource };

export interface TranscribeOptions {
  readonly limits?: WavLimits;
  /** A speaker's pause longer than this starts a new turn. */
  readonly maxPauseMs?: number;
  readonly chunkMs?: number;
  readonly yieldEveryMs?: number;
}

export interface CallTranscript {
  readonly words: SpeakerWord[];
  readonly turns: Turn[];
  readonly durationMs: number;
  readonly model: string;
}

// Silence fed after the end of a leg: the recognizer decodes only whole chunks of features
// (sherpa-onnx's IsReady), so without it the last words of a leg would never be decoded.
const TAIL_PADDING_MS = 600;
const MODEL_RATE = 16000;

async function readSource(source: WavSource, limits: WavLimits): Promise<Wav> {
  if (source instanceof Uint8Array) return parseWav(source, limits);
  let size: number;
  try {
    size = (await stat(source.path)).size;
  } catch (e) {
    throw cadenzaError('RECORDING_INVALID', `The recording ${source.path} cannot be read.`, { reason: 'unreadable', cause: (e as NodeJS.ErrnoException).code });
  }
  // Checked before reading, so a huge file is refused without loading it.
  if (size > limits.maxBytes) {
    throw cadenzaError('RECORDING_INVALID', `The recording is ${size} bytes; the limit is ${limits.maxBytes}.`, { reason: 'too_large', bytes: size });
  }
  return parseWav(await readFile(source.path), limits);
}

async function legs(recording: CallRecording, limits: WavLimits): Promise<{ speaker: Speaker; samples: Float32Array; sampleRate: number }[]> {
  if (recording.kind === 'stereo') {
    const wav = await readSource(recording.wav, limits);
    if (wav.channels.length !== 2) {
      throw cadenzaError('RECORDING_INVALID', `A stereo call recording needs two channels (one per leg); this one has ${wav.channels.length}.`, {
        reason: 'unsupported_channels',
        channels: wav.channels.length,
      });
    }
    const rep = recording.repChannel ?? 0;
    return [
      { speaker: 'rep', samples: wav.channels[rep]!, sampleRate: wav.sampleRate },
      { speaker: 'prospect', samples: wav.channels[1 - rep]!, sampleRate: wav.sampleRate },
    ];
  }
  const out = [];
  for (const speaker of ['rep', 'prospect'] as const) {
    const wav = await readSource(recording[speaker], limits);
    if (wav.channels.length !== 1) {
      throw cadenzaError('RECORDING_INVALID', `The ${speaker}'s leg must be mono; it has ${wav.channels.length} channels.`, {
        reason: 'unsupported_channels',
        speaker,
      });
    }
    out.push({ speaker, samples: wav.channels[0]!, sampleRate: wav.sampleRate });
  }
  return out;
}

/** Streams one leg through the recognizer; returns its words with times from the leg's start. */
export async function transcribeLeg(
  model: LoadedModel,
  samples: Float32Array,
  sampleRate: number,
  options: Pick<TranscribeOptions, 'chunkMs' | 'yieldEveryMs'> = {},
): Promise<{ word: string; startMs: number; endMs: number }[]> {
  const { recognizer } = model;
  const stream = recognizer.createStream();
  // The models run at 16 kHz; phone legs arrive at 8 kHz. Resampled here, chunk by chunk, with
  // sherpa-onnx's own resampler (the one it would otherwise create itself, logging to stderr).
  const resampler = sampleRate === MODEL_RATE ? undefined : model.resampler(sampleRate, MODEL_RATE);
  const feed = (piece: Float32Array, last: boolean): void => {
    const samples = resampler ? (last ? resampler.flush(piece) : resampler.resample(piece)) : piece;
    stream.acceptWaveform({ samples, sampleRate: MODEL_RATE });
  };
  const chunk = Math.max(1, Math.round(((options.chunkMs ?? 100) * sampleRate) / 1000));
  const yieldEvery = Math.max(chunk, Math.round(((options.yieldEveryMs ?? 2000) * sampleRate) / 1000));
  let sinceYield = 0;
  for (let at = 0; at < samples.length; at += chunk) {
    feed(samples.subarray(at, Math.min(samples.length, at + chunk)), false);
    while (recognizer.isReady(stream)) recognizer.decode(stream);
    sinceYield += chunk;
    if (sinceYield >= yieldEvery) {
      sinceYield = 0;
      await turn();
    }
  }
  feed(new Float32Array(Math.round((TAIL_PADDING_MS * sampleRate) / 1000)), true);
  stream.inputFinished();
  while (recognizer.isReady(stream)) recognizer.decode(stream);
  const result = recognizer.getResult(stream);
  // Whole milliseconds, as the transcript's durationMs is, so no word ends after the call.
  const legMs = Math.round((samples.length / sampleRate) * 1000);
  // A word emitted in the tail padding still belongs to the leg: clamp it to the leg's end.
  return tokensToWords(result.tokens, result.timestamps).map((w) => ({
    word: w.word,
    startMs: Math.min(w.startMs, legMs),
    endMs: Math.min(w.endMs, legMs),
  }));
}

export async function transcribeCall(model: LoadedModel, recording: CallRecording, options: TranscribeOptions = {}): Promise<CallTranscript> {
  const limits = options.limits ?? DEFAULT_WAV_LIMITS;
  const all = await legs(recording, limits);
  const words: SpeakerWord[] = [];
  let durationMs = 0;
  for (const leg of all) {
    durationMs = Math.max(durationMs, (leg.samples.length / leg.sampleRate) * 1000);
    for (const w of await transcribeLeg(model, leg.samples, leg.sampleRate, options)) words.push({ speaker: leg.speaker, ...w });
  }
  words.sort((a, b) => a.startMs - b.startMs || (a.speaker === b.speaker ? 0 : a.speaker === 'rep' ? -1 : 1));
  return { words, turns: mergeTurns(words, options.maxPauseMs), durationMs: Math.round(durationMs), model: model.id };
}
