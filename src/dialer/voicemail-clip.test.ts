import { describe, expect, it } from 'vitest';
import { MAX_CLIP_BYTES, checkClip, clipType, silentWav, sniffClipType, wavDurationMs } from './voicemail-clip.ts';

const webm = (n = 2000) => Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), Buffer.alloc(n)]);

describe('a voicemail clip at upload', () => {
  it('takes what the browser records, with its codec parameter, at the length it measured', () => {
    expect(checkClip(webm(), 'audio/webm;codecs=opus', 12_345)).toEqual({ ok: true, mimeType: 'audio/webm', durationMs: 12_345 });
    expect(checkClip(Buffer.concat([Buffer.from('OggS'), Buffer.alloc(100)]), 'audio/ogg', 5000)).toMatchObject({ ok: true, mimeType: 'audio/ogg' });
    expect(checkClip(Buffer.concat([Buffer.from('ID3'), Buffer.alloc(100)]), 'audio/mp3', 5000)).toMatchObject({ ok: true, mimeType: 'audio/mpeg' });
  });

  it("believes a WAV file's header, not the declared length", () => {
    expect(wavDurationMs(silentWav(2500))).toBe(2500);
    expect(checkClip(silentWav(2500), 'audio/x-wav', 999_999)).toEqual({ ok: true, mimeType: 'audio/wav', durationMs: 2500 });
    // A streaming writer's size of 0: the bytes there count.
    expect(wavDurationMs(silentWav(1500, 0))).toBe(1500);
    expect(checkClip(silentWav(33_000), 'audio/wav', 1000)).toMatchObject({ ok: false, code: 'too_large' });
    expect(checkClip(Buffer.from('RIFF\0\0\0\0WAVEjunk'), 'audio/wav', 1000)).toMatchObject({ ok: false, code: 'bad_wav' });
  });

  it('refuses, with a code and a reason: empty, too large, an unknown type, a type its bytes deny, too long, too short', () => {
    expect(checkClip(Buffer.alloc(0), 'audio/webm', 1000)).toMatchObject({ ok: false, code: 'empty' });
    expect(checkClip(webm(MAX_CLIP_BYTES), 'audio/webm', 1000)).toMatchObject({ ok: false, code: 'too_large', reason: expect.stringContaining('512 KB') });
    expect(checkClip(webm(), 'video/mp4', 1000)).toMatchObject({ ok: false, code: 'unsupported_type' });
    expect(checkClip(Buffer.from('<svg onload=alert(1)>'), 'audio/webm', 1000)).toMatchObject({ ok: false, code: 'type_mismatch', reason: expect.stringContaining('not a known audio format') });
    expect(checkClip(silentWav(1000), 'audio/webm', 1000)).toMatchObject({ ok: false, code: 'type_mismatch', reason: expect.stringContaining('audio/wav') });
    expect(checkClip(webm(), 'audio/webm', 61_000)).toMatchObject({ ok: false, code: 'too_long', reason: expect.stringContaining('60 s') });
    expect(checkClip(webm(), 'audio/webm', 400)).toMatchObject({ ok: false, code: 'too_short' });
    expect(checkClip(webm(), 'audio/webm', Number.NaN)).toMatchObject({ ok: false, code: 'too_short' });
  });

  it('names types by their signature', () => {
    expect(sniffClipType(Buffer.from([0xff, 0xfb, 0x90]))).toBe('audio/mpeg');
    expect(sniffClipType(Buffer.from('RIFF'))).toBeNull();
    expect(clipType('Audio/WAVE ; x=1')).toBe('audio/wav');
  });
});
