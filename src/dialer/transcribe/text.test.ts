import { describe, expect, it } from 'vitest';
import { mergeTurns, type SpeakerWord } from './turns.js';
import { corpusWer, wordErrorRate } from './wer.js';
import { tokensToWords } from './words.js';

describe('tokensToWords', () => {
  it('joins sentencepiece pieces into words; a word ends where the next starts, at most a frame after its last piece', () => {
    const words = tokensToWords(['\u2581HEL', 'LO', '\u2581THERE', '\u2581', 'BOB'], [0.2, 0.28, 0.6, 1.0, 1.04]);
    expect(words).toEqual([
      { word: 'hello', startMs: 200, endMs: 320 },
      { word: 'there', startMs: 600, endMs: 640 },
      { word: 'bob', startMs: 1040, endMs: 1080 },
    ]);
  });

  it('reads the mark as sherpa-onnx returns it: a leading space', () => {
    expect(tokensToWords([' call', ' me', ' ba', 'ck'], [0, 0.04, 0.08, 0.12]).map((w) => w.word)).toEqual(['call', 'me', 'back']);
  });

  it('takes a first piece without the mark as a word, and ignores timestamps missing', () => {
    expect(tokensToWords(['yes', '\u2581no'], [0.1])).toEqual([{ word: 'yes', startMs: 100, endMs: 140 }]);
    expect(tokensToWords([], [])).toEqual([]);
  });
});

describe('mergeTurns', () => {
  const w = (speaker: 'rep' | 'prospect', word: string, startMs: number, endMs = startMs + 300): SpeakerWord => ({ speaker, word, startMs, endMs });

  it('interleaves the legs in time and groups each speaker\u2019s run of words', () => {
    const turns = mergeTurns([
      w('rep', 'hello', 0), w('rep', 'there', 400),
      w('prospect', 'hi', 1000), w('prospect', 'bob', 1300),
      w('rep', 'great', 2000),
    ]);
    expect(turns).toEqual([
      { speaker: 'rep', startMs: 0, endMs: 700, text: 'hello there' },
      { speaker: 'prospect', startMs: 1000, endMs: 1600, text: 'hi bob' },
      { speaker: 'rep', startMs: 2000, endMs: 2300, text: 'great' },
    ]);
  });

  it('splits one speaker\u2019s words at a long pause, and cuts a turn when the other speaker talks over it', () => {
    expect(mergeTurns([w('rep', 'one', 0), w('rep', 'two', 5000)], 1500).map((t) => t.text)).toEqual(['one', 'two']);
    const overlap = mergeTurns([w('rep', 'one', 0), w('rep', 'two', 600), w('prospect', 'sorry', 300)]);
    expect(overlap.map((t) => `${t.speaker}:${t.text}`)).toEqual(['rep:one', 'prospect:sorry', 'rep:two']);
  });

  it('puts the rep first on a tie and returns nothing for no words', () => {
    expect(mergeTurns([w('prospect', 'b', 100), w('rep', 'a', 100)]).map((t) => t.speaker)).toEqual(['rep', 'prospect']);
    expect(mergeTurns([])).toEqual([]);
  });
});

describe('wordErrorRate', () => {
  it('counts substitutions, deletions and insertions over the reference words', () => {
    expect(wordErrorRate('call me back at five', 'call me back at five').wer).toBe(0);
    expect(wordErrorRate('call me back at five', 'call be back five').errors).toBe(2);
    expect(wordErrorRate('one two', 'one two three four').wer).toBe(1);
    expect(wordErrorRate('Hello, Bob!', 'hello bob').wer).toBe(0);
    expect(wordErrorRate('', '').wer).toBe(0);
    expect(wordErrorRate('', 'noise').wer).toBe(1);
  });

  it('pools a corpus by words, not by averaging rates', () => {
    const r = corpusWer([
      { reference: 'a', hypothesis: 'b' },
      { reference: 'a b c d e f g h i', hypothesis: 'a b c d e f g h i' },
    ]);
    expect(r).toEqual({ errors: 1, referenceWords: 10, wer: 0.1 });
  });
});
