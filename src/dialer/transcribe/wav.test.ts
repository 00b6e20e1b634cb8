import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.js';
import { encodeWav, parseWav, type WavLimits } from './wav.js';

function refusal(bytes: Uint8Array, limits?: WavLimits): string {
  try {
    parseWav(bytes, limits);
  } catch (e) {
    if (!isCadenzaError(e, 'RECORDING_INVALID')) throw e;
    return String(e.details.reason);
  }
  return 'accepted';
}

const tone = (n: number, f = 0.01): Float32Array => Float32Array.from({ length: n }, (_, i) => 0.5 * Math.sin(i * f));

describe('parseWav', () => {
  it('reads back what encodeWav writes, per channel', () => {
    const left = tone(800);
    const right = tone(800, 0.03);
    const wav = parseWav(encodeWav(8000, [left, right]));
    expect(wav.sampleRate).toBe(8000);
    expect(wav.channels).toHaveLength(2);
    expect(wav.durationMs).toBe(100);
    for (let i = 0; i < 800; i += 97) {
      expect(wav.channels[0]![i]).toBeCloseTo(left[i]!, 3);
      expect(wav.channels[1]![i]).toBeCloseTo(right[i]!, 3);
    }
  });

  it('skips chunks it does not know (LIST, fact) and reads mu-law', () => {
    const pcm = encodeWav(8000, [tone(10)]);
    // Rebuild as mu-law with a LIST chunk before fmt: RIFF, LIST(4), fmt(16), data(10).
    const data = Uint8Array.from({ length: 10 }, (_, i) => (i % 2 ? 0xff : 0x00)); // 0xff is +0, 0x00 is -32124
    const b = new Uint8Array(12 + 12 + 24 + 8 + 10);
    const v = new DataView(b.buffer);
    const put = (at: number, s: string): void => s.split('').forEach((c, i) => (b[at + i] = c.charCodeAt(0)));
    put(0, 'RIFF'); v.setUint32(4, b.length - 8, true); put(8, 'WAVE');
    put(12, 'LIST'); v.setUint32(16, 4, true); put(20, 'INFO');
    put(24, 'fmt '); v.setUint32(28, 16, true); v.setUint16(32, 7, true); v.setUint16(34, 1, true);
    v.setUint32(36, 8000, true); v.setUint32(40, 8000, true); v.setUint16(44, 1, true); v.setUint16(46, 8, true);
    put(48, 'data'); v.setUint32(52, 10, true); b.set(data, 56);
    const wav = parseWav(b);
    expect(wav.channels[0]![1]).toBe(0);
    expect(wav.channels[0]![0]).toBeCloseTo(-32124 / 32768, 4);
    expect(pcm.length).toBeGreaterThan(44);
  });

  it('reads a WAV streamed before its length was known (data size 0x7ffff000, as espeak-ng --stdout writes) to the end', () => {
    const b = encodeWav(8000, [tone(80)]);
    new DataView(b.buffer).setUint32(40, 0x7ffff000, true);
    expect(parseWav(b).channels[0]).toHaveLength(80);
  });

  it('refuses what is not a WAV, with a reason', () => {
    expect(refusal(new TextEncoder().encode('ID3\u0003 this is an mp3, honest'))).toBe('not_wav');
    expect(refusal(new Uint8Array(0))).toBe('not_wav');
    expect(refusal(new TextEncoder().encode('RIFF\u0000\u0000\u0000\u0000AVI LIST'))).toBe('not_wav');
  });

  it('refuses a truncated file: data cut short, no data chunk, format chunk cut short', () => {
    const full = encodeWav(16000, [tone(1600)]);
    expect(refusal(full.subarray(0, full.length - 100))).toBe('truncated');
    expect(refusal(full.subarray(0, 36))).toBe('truncated');
    expect(refusal(full.subarray(0, 30))).toBe('truncated');
  });

  it('refuses a wrong sample rate, channel count, encoding, or an empty recording', () => {
    expect(refusal(encodeWav(44100, [tone(441)]))).toBe('unsupported_sample_rate');
    expect(refusal(encodeWav(8000, [tone(8), tone(8), tone(8)]))).toBe('unsupported_channels');
    const b = encodeWav(8000, [tone(8)]);
    new DataView(b.buffer).setUint16(34, 24, true); // claims 24-bit PCM
    expect(refusal(b)).toBe('unsupported_encoding');
    expect(refusal(encodeWav(8000, [new Float32Array(0)]))).toBe('empty');
  });

  it('refuses a huge header before allocating anything, and a too-long recording', () => {
    // A 44-byte file whose data chunk claims 4 GB: refused as truncated without reading on.
    const liar = encodeWav(8000, [new Float32Array(0)]);
    new DataView(liar.buffer).setUint32(40, 0xfffffff0, true);
    expect(refusal(liar)).toBe('truncated');
    const limits: WavLimits = { sampleRates: [8000], maxChannels: 2, maxBytes: 1100, maxDurationMs: 50 };
    expect(refusal(encodeWav(8000, [tone(600)]), limits)).toBe('too_large');
    expect(refusal(encodeWav(8000, [tone(480)]), limits)).toBe('too_long');
  });

  it('answers every random mangling of a WAV with a WAV or RECORDING_INVALID, quickly', () => {
    const good = encodeWav(8000, [tone(400), tone(400)]);
    let seed = 7;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const started = performance.now();
    for (let k = 0; k < 2000; k++) {
      const b = good.slice(0, Math.floor(rnd() * good.length) + 1);
      for (let j = 0; j < 4; j++) b[Math.floor(rnd() * Math.min(b.length, 60))] = Math.floor(rnd() * 256);
      expect(['accepted', 'not_wav', 'truncated', 'unsupported_encoding', 'unsupported_sample_rate', 'unsupported_channels', 'empty', 'too_long']).toContain(refusal(b));
    }
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
