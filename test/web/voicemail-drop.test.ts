import { describe, expect, it } from 'vitest';
import { DROP_TAIL_MS, MAX_DROP_MS, clipBytes, dropDeadline, dropNote, dropStatus, mayDrop } from '../../web/src/dialer/voicemail-drop.ts';

/** The voicemail drop's pure part (web/src/dialer/voicemail-drop.ts); the end-to-end test drives the rest. */
describe('voicemail drop', () => {
  it('may start only into an answered call, with a clip, once', () => {
    expect(mayDrop({ answered: true, hasClip: true, dropping: false })).toEqual({ ok: true });
    expect(mayDrop({ answered: true, hasClip: false, dropping: false })).toMatchObject({ ok: false, reason: 'no_clip' });
    expect(mayDrop({ answered: false, hasClip: true, dropping: false })).toMatchObject({ ok: false, reason: 'not_answered' });
    expect(mayDrop({ answered: true, hasClip: true, dropping: true })).toMatchObject({ ok: false, reason: 'already_dropping' });
  });

  it('hangs up by a deadline after the clip, the cap bounding a clip that claims more', () => {
    expect(dropDeadline(1000, 12_000)).toBe(1000 + 12_000 + DROP_TAIL_MS + 2000);
    expect(dropDeadline(0, 10 * MAX_DROP_MS)).toBe(MAX_DROP_MS + DROP_TAIL_MS + 2000);
    expect(dropDeadline(0, -5)).toBe(DROP_TAIL_MS + 2000);
  });

  it('logs a note saying a voicemail was dropped, before what the rep typed; counts down while it plays', () => {
    expect(dropNote(12_400)).toBe('Voicemail dropped (recorded message, 12 s).');
    expect(dropNote(12_400, '  left the pricing pitch \n')).toBe('Voicemail dropped (recorded message, 12 s).\nleft the pricing pitch');
    const d = { number: '+15550100010', startedAt: 10_000, clipMs: 8000 };
    expect(dropStatus(d, 13_000)).toBe('Voicemail playing to +15550100010, 5 s left');
    expect(dropStatus(d, 30_000)).toBe('Voicemail playing to +15550100010, 0 s left');
  });

  it('decodes the route’s base64 clip to bytes', () => {
    expect(Array.from(new Uint8Array(clipBytes(Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0]).toString('base64'))))).toEqual([0x1a, 0x45, 0xdf, 0xa3, 0]);
  });
});
