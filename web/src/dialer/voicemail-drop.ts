/**
 * Voicemail drop, the part without a browser (docs/dialer.md "Voicemail drop"): when a drop may
 * start, when the softphone hangs up at the latest, the note the call is logged with, and what the
 * panel says while it plays. softphone.ts plays the clip; CallPanel.tsx and PowerDialer.tsx use this.
 */

/** The server's cap (src/dialer/voicemail-clip.ts MAX_CLIP_MS): a clip longer than it is cut here too. */
export const MAX_DROP_MS = 60_000;

/**
 * After the clip's last sample, the call stays up this long before the hang-up: the jitter buffer
 * of the carrier's voicemail box still holds the end of the message, and a BYE that overtakes it
 * clips the rep's last word.
 */
export const DROP_TAIL_MS = 600;

/** The clip's own end never came (a decoder stall, a tab put to sleep): the softphone hangs up by this instant anyway. */
export function dropDeadline(startedAt: number, clipMs: number): number {
  return startedAt + Math.min(Math.max(0, clipMs), MAX_DROP_MS) + DROP_TAIL_MS + 2_000;
}

export type DropRefusal = 'no_clip' | 'not_answered' | 'already_dropping';

/** Whether the rep may drop now: only into an answered call, with a saved clip, and once per call. */
export function mayDrop(s: { answered: boolean; hasClip: boolean; dropping: boolean }): { ok: true } | { ok: false; reason: DropRefusal; text: string } {
  if (!s.hasClip) return { ok: false, reason: 'no_clip', text: 'Record your voicemail message first' };
  if (!s.answered) return { ok: false, reason: 'not_answered', text: 'A voicemail can be dropped once the call is answered' };
  if (s.dropping) return { ok: false, reason: 'already_dropping', text: 'A voicemail is already playing into this call' };
  return { ok: true };
}

const secs = (ms: number) => `${Math.max(0, Math.round(ms / 1000))} s`;

/** The note the call is logged with (the outcome is 'voicemail'), before anything the rep typed. */
export function dropNote(clipMs: number, repNotes?: string): string {
  const note = `Voicemail dropped (recorded message, ${secs(Math.min(clipMs, MAX_DROP_MS))}).`;
  return repNotes?.trim() ? `${note}\n${repNotes.trim()}` : note;
}

/** One drop as the panel shows it, beside (never as) the call in progress. */
export interface DropView {
  number: string;
  startedAt: number;
  clipMs: number;
}

/** "Voicemail playing to +1…, 7 s left"; the time left never goes below 0 s (the tail and the hang-up follow). */
export function dropStatus(d: DropView, now: number): string {
  return `Voicemail playing to ${d.number}, ${secs(d.startedAt + Math.min(d.clipMs, MAX_DROP_MS) - now)} left`;
}

/** The clip as the voicemail route returns it (base64) to the bytes the browser decodes. */
export function clipBytes(base64: string): ArrayBuffer {
  const bin = atob(base64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
}
