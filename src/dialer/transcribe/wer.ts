/**
 * Word error rate: (substitutions + deletions + insertions) / reference words, by the usual
 * Levenshtein alignment over words after lower-casing and dropping punctuation. Pure; O(r x h)
 * time and O(h) memory.
 */
export interface WerResult {
  readonly errors: number;
  readonly referenceWords: number;
  /** errors / referenceWords; 0 for an empty reference and hypothesis, 1 per inserted word otherwise. */
  readonly wer: number;
}

export function normalizeWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
    .split(' ')
    .filter((w) => w !== '');
}

export function wordErrorRate(reference: string, hypothesis: string): WerResult {
  const r = normalizeWords(reference);
  const h = normalizeWords(hypothesis);
  let row = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const next = [i];
    for (let j = 1; j <= h.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1));
    }
    row = next;
  }
  const errors = row[h.length]!;
  return { errors, referenceWords: r.length, wer: r.length === 0 ? errors : errors / r.length };
}

/** Corpus WER: total errors over total reference words (not the mean of per-call rates). */
export function corpusWer(pairs: readonly { reference: string; hypothesis: string }[]): WerResult {
  let errors = 0;
  let referenceWords = 0;
  for (const p of pairs) {
    const one = wordErrorRate(p.reference, p.hypothesis);
    errors += one.errors;
    referenceWords += one.referenceWords;
  }
  return { errors, referenceWords, wer: referenceWords === 0 ? errors : errors / referenceWords };
}
