/**
 * From a streaming transducer's tokens and their emission times to words with start and end.
 *
 * sherpa-onnx reports, for each emitted token, the time of the encoder frame that emitted it
 * (frame index x 10 ms x subsampling 4). Tokens follow sentencepiece's convention: a token that
 * starts with U+2581 begins a new word, any other token continues the current one; sherpa-onnx
 * hands the mark back as a leading space, which counts the same. Byte-level BPE
 * and CJK character models are not handled here; Cadenza configures an English BPE model.
 *
 * A transducer emits a word once it has heard (most of) it, so emission times run late by up to a
 * word's length. We take a word's start as its first token's emission and its end as its last
 * token's emission plus one encoder frame, capped so that a word never ends after the next one
 * starts; good enough to place a word in a speaker's turn and to seek the recording near it.
 */
export const WORD_START = '\u2581';

export interface TimedWord {
  readonly word: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** Tokens and their times (seconds, as sherpa-onnx returns them) to words; pure. */
export function tokensToWords(tokens: readonly string[], timestampsSec: readonly number[], frameMs = 40): TimedWord[] {
  const words: { word: string; startMs: number; lastMs: number }[] = [];
  const n = Math.min(tokens.length, timestampsSec.length);
  let pending = true; // the next piece starts a word
  for (let i = 0; i < n; i++) {
    const token = tokens[i]!;
    const ms = Math.round(timestampsSec[i]! * 1000);
    // sherpa-onnx's symbol table already turns the mark into a space (" hello"); tokens.txt has it.
    const marked = token.startsWith(WORD_START) || token.startsWith(' ');
    const piece = marked ? token.slice(1) : token;
    if (marked || pending) {
      // A lone word mark (sentencepiece splits rare words so): the next piece starts the word.
      pending = piece === '';
      if (!pending) words.push({ word: piece, startMs: ms, lastMs: ms });
    } else {
      const w = words[words.length - 1]!;
      w.word += piece;
      w.lastMs = ms;
    }
  }
  return words.map((w, i) => {
    const next = words[i + 1];
    const end = w.lastMs + frameMs;
    return { word: w.word.toLowerCase(), startMs: w.startMs, endMs: next ? Math.max(w.startMs, Math.min(end, next.startMs)) : end };
  });
}
