/**
 * The checks a rep's recorded voicemail passes before it is stored (docs/dialer.md "Voicemail
 * drop"). Pure: bytes, a declared type and a declared length in, a verdict with a stable code and
 * a reason in plain words out. The upload route turns a refusal into a 400.
 *
 * Why these limits:
 * - 60 s: a voicemail drop is a short message; carriers' voicemail boxes commonly cut recordings
 *   at one to three minutes, and the rep moves on while it plays, so the call stays up this long.
 * - 512 KiB: a minute of Opus in WebM (what Chromium's MediaRecorder makes) is about 250 KB at its
 *   default 32 kbit/s; 8 kHz 16-bit mono WAV (what a telephone line carries) is 960 KB a minute, so
 *   a WAV upload is limited to about 30 s. Base64 in JSON (about 700 KB) stays under the HTTP
 *   server's 1 MiB body limit.
 * - 1 s minimum: a shorter clip is a mis-click on Stop, not a message.
 */
export const MAX_CLIP_BYTES = 512 * 1024;
export const MAX_CLIP_MS = 60_000;
export const MIN_CLIP_MS = 1_000;

export const CLIP_TYPES = ['audio/webm', 'audio/ogg', 'audio/wav', 'audio/mpeg'] as const;
export type ClipType = (typeof CLIP_TYPES)[number];

export type ClipVerdict =
  | { ok: true; mimeType: ClipType; durationMs: number }
  | { ok: false; code: 'unsupported_type' | 'type_mismatch' | 'too_large' | 'empty' | 'too_long' | 'too_short' | 'bad_wav'; reason: string };

/** The container the bytes' signature says, or null: the declared type is checked against it. */
export function sniffClipType(b: Uint8Array): ClipType | null {
  const ascii = (from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
  if (b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return 'audio/webm'; // EBML header
  if (b.length >= 4 && ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (b.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  // An ID3v2 tag, or an MPEG audio frame's 11-bit sync word.
  if (b.length >= 3 && ascii(0, 3) === 'ID3') return 'audio/mpeg';
  if (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) return 'audio/mpeg';
  return null;
}

/** 'audio/webm;codecs=opus' → 'audio/webm'; the aliases browsers and file pickers use. */
export function clipType(declared: string): ClipType | null {
  const t = declared.split(';', 1)[0]!.trim().toLowerCase();
  const alias: Record<string, ClipType> = { 'audio/x-wav': 'audio/wav', 'audio/wave': 'audio/wav', 'audio/vnd.wave': 'audio/wav', 'audio/mp3': 'audio/mpeg', 'video/webm': 'audio/webm' };
  const norm = alias[t] ?? t;
  return (CLIP_TYPES as readonly string[]).includes(norm) ? (norm as ClipType) : null;
}

/**
 * A WAV file's length from its header (RIFF chunks: 'fmt ' gives the byte rate, 'data' the size).
 * The header, not the browser, is believed for WAV; null when the chunks are missing or lie.
 */
export function wavDurationMs(b: Uint8Array): number | null {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let byteRate = 0;
  let at = 12;
  while (at + 8 <= b.length) {
    const id = String.fromCharCode(...b.subarray(at, at + 4));
    const size = v.getUint32(at + 4, true);
    if (id === 'fmt ' && at + 20 <= b.length) byteRate = v.getUint32(at + 16, true);
    if (id === 'data') {
      if (!byteRate) return null;
      // A streaming writer leaves the size at 0 or 0xFFFFFFFF: count what is there.
      const data = size === 0 || at + 8 + size > b.length ? b.length - at - 8 : size;
      return Math.round((data / byteRate) * 1000);
    }
    at += 8 + size + (size % 2);
  }
  return null;
}

export function checkClip(audio: Uint8Array, declaredType: string, declaredMs: number): ClipVerdict {
  if (audio.length === 0) return { ok: false, code: 'empty', reason: 'the recording is empty' };
  if (audio.length > MAX_CLIP_BYTES) return { ok: false, code: 'too_large', reason: `the recording is ${Math.ceil(audio.length / 1024)} KB; the limit is ${MAX_CLIP_BYTES / 1024} KB` };
  const declared = clipType(declaredType);
  if (!declared) return { ok: false, code: 'unsupported_type', reason: `${declaredType || 'this type'} is not a supported recording; use WebM/Opus (what the browser records), Ogg, WAV or MP3` };
  const sniffed = sniffClipType(audio);
  if (sniffed !== declared) return { ok: false, code: 'type_mismatch', reason: `the file says ${declared} but its contents are ${sniffed ?? 'not a known audio format'}` };
  let ms = declaredMs;
  if (declared === 'audio/wav') {
    const fromHeader = wavDurationMs(audio);
    if (fromHeader === null) return { ok: false, code: 'bad_wav', reason: 'the WAV file has no readable format and data chunks' };
    ms = fromHeader;
  }
  if (!Number.isFinite(ms) || ms < MIN_CLIP_MS) return { ok: false, code: 'too_short', reason: `the recording is shorter than ${MIN_CLIP_MS / 1000} s` };
  if (ms > MAX_CLIP_MS) return { ok: false, code: 'too_long', reason: `the recording is ${Math.round(ms / 1000)} s; the limit is ${MAX_CLIP_MS / 1000} s` };
  return { ok: true, mimeType: declared, durationMs: Math.round(ms) };
}

/**
 * `ms` of silence as 8 kHz 16-bit mono PCM WAV: the API's example upload, and the tests' clip.
 * `dataSize` overrides the header's data size (a streaming writer leaves 0).
 */
export function silentWav(ms: number, dataSize?: number): Buffer {
  const data = Math.round((ms / 1000) * 16_000);
  const b = Buffer.alloc(44 + data);
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + data, 4);
  b.write('WAVEfmt ', 8, 'ascii');
  b.writeUInt32LE(16, 16); // the fmt chunk's size
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(8000, 24); // samples a second
  b.writeUInt32LE(16_000, 28); // bytes a second
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(dataSize ?? data, 40);
  return b;
}
