/**
 * Reads a call recording's WAV bytes into float samples per channel, or says plainly why not.
 *
 * Pure and bounded: the chunk walk visits each RIFF chunk header once and stops at the end of the
 * buffer, sizes are checked before anything is allocated, so a hostile or broken file costs time
 * linear in its length and never more memory than its samples. Accepted encodings are the ones
 * telephony recorders write: 16-bit PCM (format 1), 32-bit float (format 3), G.711 mu-law (7) and
 * A-law (6), and WAVE_FORMAT_EXTENSIBLE wrapping PCM or float. Everything else is refused with
 * RECORDING_INVALID and a `reason` a person (or the job queue's "failed" state) can show.
 */
import { cadenzaError, type CadenzaError } from '../../common/errors.js';

export type WavRefusal =
  | 'not_wav'
  | 'truncated'
  | 'unsupported_encoding'
  | 'unsupported_sample_rate'
  | 'unsupported_channels'
  | 'too_large'
  | 'too_long'
  | 'empty';

export interface WavLimits {
  /** Sample rates accepted; sherpa-onnx resamples anything else itself, but a rate outside
   * telephony's is more likely a wrong file than a call. */
  readonly sampleRates: readonly number[];
  readonly maxChannels: number;
  readonly maxBytes: number;
  readonly maxDurationMs: number;
}

export const DEFAULT_WAV_LIMITS: WavLimits = {
  sampleRates: [8000, 16000],
  maxChannels: 2,
  // A 4-hour stereo 16 kHz 16-bit call is 921.6 MB; 4 hours also bounds the decoding time.
  maxBytes: 1024 * 1024 * 1024,
  maxDurationMs: 4 * 60 * 60 * 1000,
};

export interface Wav {
  readonly sampleRate: number;
  /** One Float32Array per channel, samples in [-1, 1] as sherpa-onnx expects. */
  readonly channels: readonly Float32Array[];
  readonly durationMs: number;
}

function refuse(reason: WavRefusal, message: string, details: Record<string, unknown> = {}): CadenzaError {
  return cadenzaError('RECORDING_INVALID', message, { reason, ...details });
}

// Placeholder data sizes of WAVs streamed before their length was known.
const STREAMED_SIZES = new Set([0, 0xffffffff, 0x7ffff000]);

const FORMAT_PCM = 1;
const FORMAT_FLOAT = 3;
const FORMAT_ALAW = 6;
const FORMAT_MULAW = 7;
const FORMAT_EXTENSIBLE = 0xfffe;

/** Parses a WAV file; throws RECORDING_INVALID (never anything else) when it cannot. */
export function parseWav(bytes: Uint8Array, limits: WavLimits = DEFAULT_WAV_LIMITS): Wav {
  if (bytes.length > limits.maxBytes) {
    throw refuse('too_large', `The recording is ${bytes.length} bytes; the limit is ${limits.maxBytes}.`, { bytes: bytes.length });
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number): string => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') {
    throw refuse('not_wav', 'The recording is not a WAV file (no RIFF/WAVE header).');
  }

  let fmt: { format: number; channels: number; sampleRate: number; bits: number; blockAlign: number } | undefined;
  let data: { offset: number; length: number } | undefined;
  let at = 12;
  while (at + 8 <= bytes.length && data === undefined) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + size > bytes.length) throw refuse('truncated', 'The WAV format chunk is cut short.');
      let format = view.getUint16(body, true);
      if (format === FORMAT_EXTENSIBLE && size >= 40) format = view.getUint16(body + 24, true); // SubFormat GUID's first two bytes
      fmt = {
        format,
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        blockAlign: view.getUint16(body + 12, true),
        bits: view.getUint16(body + 14, true),
      };
    } else if (id === 'data') {
      if (STREAMED_SIZES.has(size)) {
        // Written to a pipe before its length was known (espeak-ng --stdout, sox and ffmpeg to
        // stdout, some recorders): the data runs to the end of the file.
        data = { offset: body, length: bytes.length - body };
        break;
      }
      if (body + size > bytes.length) {
        // Recorders that crash leave the header's size larger than what was written; the call
        // may be worth transcribing, but we would be guessing where it ends: refuse and say so.
        throw refuse('truncated', `The WAV data chunk declares ${size} bytes but only ${bytes.length - body} follow.`, {
          declared: size,
          present: bytes.length - body,
        });
      }
      data = { offset: body, length: size };
    }
    at = body + size + (size % 2); // chunks are word-aligned
  }
  if (fmt === undefined) throw refuse('truncated', 'The WAV file has no format chunk.');
  if (data === undefined) throw refuse('truncated', 'The WAV file has no data chunk.');

  const { format, channels, sampleRate, bits } = fmt;
  const codec =
    format === FORMAT_PCM && bits === 16 ? 'pcm16'
    : format === FORMAT_FLOAT && bits === 32 ? 'float32'
    : format === FORMAT_MULAW && bits === 8 ? 'mulaw'
    : format === FORMAT_ALAW && bits === 8 ? 'alaw'
    : undefined;
  if (codec === undefined) {
    throw refuse('unsupported_encoding', `WAV format ${format} with ${bits} bits per sample is not supported (16-bit PCM, 32-bit float, mu-law or A-law are).`, { format, bits });
  }
  if (channels < 1 || channels > limits.maxChannels) {
    throw refuse('unsupported_channels', `The recording has ${channels} channels; 1 to ${limits.maxChannels} are supported.`, { channels });
  }
  if (!limits.sampleRates.includes(sampleRate)) {
    throw refuse('unsupported_sample_rate', `The recording's sample rate is ${sampleRate} Hz; supported: ${limits.sampleRates.join(', ')} Hz.`, { sampleRate });
  }
  const bytesPerSample = bits / 8;
  const frames = Math.floor(data.length / (bytesPerSample * channels));
  if (frames === 0) throw refuse('empty', 'The recording has no samples.');
  const durationMs = (frames / sampleRate) * 1000;
  if (durationMs > limits.maxDurationMs) {
    throw refuse('too_long', `The recording lasts ${Math.round(durationMs / 1000)} s; the limit is ${limits.maxDurationMs / 1000} s.`, { durationMs });
  }

  const out = Array.from({ length: channels }, () => new Float32Array(frames));
  const stride = bytesPerSample * channels;
  for (let c = 0; c < channels; c++) {
    const dst = out[c]!;
    let p = data.offset + c * bytesPerSample;
    for (let i = 0; i < frames; i++, p += stride) {
      dst[i] =
        codec === 'pcm16' ? view.getInt16(p, true) / 32768
        : codec === 'float32' ? Math.max(-1, Math.min(1, view.getFloat32(p, true) || 0))
        : codec === 'mulaw' ? MULAW[bytes[p]!]!
        : ALAW[bytes[p]!]!;
    }
  }
  return { sampleRate, channels: out, durationMs };
}

/** 16-bit PCM WAV bytes from channels of float samples (tests, the bench, and stored derived audio). */
export function encodeWav(sampleRate: number, channels: readonly Float32Array[]): Uint8Array {
  const n = channels[0]?.length ?? 0;
  const k = channels.length;
  const bytes = new Uint8Array(44 + n * k * 2);
  const view = new DataView(bytes.buffer);
  const put = (at: number, s: string): void => {
    for (let i = 0; i < 4; i++) bytes[at + i] = s.charCodeAt(i);
  };
  put(0, 'RIFF');
  view.setUint32(4, 36 + n * k * 2, true);
  put(8, 'WAVE');
  put(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, FORMAT_PCM, true);
  view.setUint16(22, k, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * k * 2, true);
  view.setUint16(32, k * 2, true);
  view.setUint16(34, 16, true);
  put(36, 'data');
  view.setUint32(40, n * k * 2, true);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < k; c++) {
      const v = Math.max(-1, Math.min(1, channels[c]![i]!));
      view.setInt16(44 + (i * k + c) * 2, Math.round(v * 32767), true);
    }
  }
  return bytes;
}

// G.711 expansion tables (ITU-T G.711), built once; the recording ingester decodes RTP with them too.
export const MULAW = new Float32Array(256);
export const ALAW = new Float32Array(256);
for (let i = 0; i < 256; i++) {
  const u = ~i & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  MULAW[i] = ((u & 0x80 ? 0x84 - t : t - 0x84) / 32768);
  const a = i ^ 0x55;
  const seg = (a & 0x70) >> 4;
  let v = (a & 0x0f) << 4;
  v = seg === 0 ? v + 8 : (v + 0x108) << (seg - 1);
  ALAW[i] = (a & 0x80 ? v : -v) / 32768;
}
