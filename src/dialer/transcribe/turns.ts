/**
 * Speaker turns from the words of the two legs of a call.
 *
 * Each leg of a call recording is one speaker (the rep's line and the prospect's line), so who
 * spoke is known; what is left is to interleave the two legs in time and group each speaker's
 * consecutive words into turns. A turn ends when the other speaker's word comes first in time or
 * when the same speaker pauses longer than `maxPauseMs`. Pure.
 */
export type Speaker = 'rep' | 'prospect';

export interface SpeakerWord {
  readonly speaker: Speaker;
  readonly word: string;
  readonly startMs: number;
  readonly endMs: number;
}

export interface Turn {
  readonly speaker: Speaker;
  readonly startMs: number;
  readonly endMs: number;
  readonly text: string;
}

/** Both legs' words in time order; on a tie the rep first, then the original order (stable). */
export function interleave(words: readonly SpeakerWord[]): SpeakerWord[] {
  return words
    .map((w, i) => ({ w, i }))
    .sort((a, b) => a.w.startMs - b.w.startMs || rank(a.w.speaker) - rank(b.w.speaker) || a.i - b.i)
    .map(({ w }) => w);
}

const rank = (s: Speaker): number => (s === 'rep' ? 0 : 1);

export function mergeTurns(words: readonly SpeakerWord[], maxPauseMs = 1500): Turn[] {
  const turns: { speaker: Speaker; startMs: number; endMs: number; words: string[] }[] = [];
  for (const w of interleave(words)) {
    const last = turns[turns.length - 1];
    if (last && last.speaker === w.speaker && w.startMs - last.endMs <= maxPauseMs) {
      last.words.push(w.word);
      last.endMs = Math.max(last.endMs, w.endMs);
    } else {
      turns.push({ speaker: w.speaker, startMs: w.startMs, endMs: w.endMs, words: [w.word] });
    }
  }
  return turns.map((t) => ({ speaker: t.speaker, startMs: t.startMs, endMs: t.endMs, text: t.words.join(' ') }));
}
