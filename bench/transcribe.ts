/**
 * Call transcription (src/dialer/transcribe): word error rate and real-time factor of the real
 * sherpa-onnx decoding path on N held-out synthesized two-leg calls (espeak-ng, voices the model
 * never heard), with the test model test/fixtures/asr by default or any streaming transducer.
 *
 * Accuracy: WER per call (both legs pooled) with median and min-max, and the corpus WER (errors
 * over all reference words). Speed: real-time factor = decoding time / audio time, where the
 * audio time is the anchor measured with it: both legs of each call, so a call of 30 s is 60 s of
 * audio decoded. Reported per call with median and min-max.
 *   npm run bench -- transcribe [--calls=10] [--model=test/fixtures/asr] [--threads=1]
 */
import { join } from 'node:path';
import { loadModel } from '../src/dialer/transcribe/model.ts';
import { espeakAvailable, synthesizeCall } from '../src/dialer/transcribe/synthetic-call.ts';
import { transcribeCall } from '../src/dialer/transcribe/transcribe.ts';
import { encodeWav } from '../src/dialer/transcribe/wav.ts';
import { corpusWer } from '../src/dialer/transcribe/wer.ts';
import { flag, intFlag } from './lib/args.ts';
import { describeLoad, loadFigures, machineLoad, showSpread, spread, spreadFigures } from './lib/rounds.ts';

export default async function transcribeBench(args: string[]): Promise<Record<string, unknown>> {
  const calls = intFlag(args, 'calls', 10);
  const threads = intFlag(args, 'threads', 1);
  const dir = flag(args, 'model') ?? join(import.meta.dirname, '../test/fixtures/asr');
  if (!espeakAvailable()) throw new Error('espeak-ng is needed to synthesize the held-out calls');

  const before = machineLoad();
  console.log(`Call transcription: ${calls} held-out synthesized calls, model ${dir}, ${threads} thread(s); ${describeLoad(before)}`);
  const t0 = performance.now();
  const model = await loadModel({ dir, numThreads: threads });
  const loadMs = performance.now() - t0;
  console.log(`model ${model.id} loaded (probe in a child, then here) in ${Math.round(loadMs)} ms\n`);

  const wers: number[] = [];
  const rtfs: number[] = [];
  const pairs: { reference: string; hypothesis: string }[] = [];
  let audioS = 0;
  let decodeS = 0;
  for (let seed = 1001; seed < 1001 + calls; seed++) {
    const call = synthesizeCall(seed);
    const wav = encodeWav(call.sampleRate, [call.rep, call.prospect]);
    const t = performance.now();
    const tr = await transcribeCall(model, { kind: 'stereo', wav });
    const s = (performance.now() - t) / 1000;
    const legAudioS = (2 * tr.durationMs) / 1000; // both legs are decoded
    audioS += legAudioS;
    decodeS += s;
    const callPairs = (['rep', 'prospect'] as const).map((sp) => ({
      reference: call.lines.filter((l) => l.speaker === sp).map((l) => l.text).join(' '),
      hypothesis: tr.words.filter((w) => w.speaker === sp).map((w) => w.word).join(' '),
    }));
    pairs.push(...callPairs);
    const w = corpusWer(callPairs);
    wers.push(w.wer);
    rtfs.push(s / legAudioS);
    console.log(`call ${seed}: ${(tr.durationMs / 1000).toFixed(1)} s, ${tr.turns.length} turns, WER ${(w.wer * 100).toFixed(1)}% (${w.errors}/${w.referenceWords}), RTF ${(s / legAudioS).toFixed(4)}`);
    if (seed === 1001) for (const turn of tr.turns) console.log(`    ${turn.speaker.padEnd(8)} ${(turn.startMs / 1000).toFixed(2)}-${(turn.endMs / 1000).toFixed(2)} s  ${turn.text}`);
  }
  const after = machineLoad();
  const total = corpusWer(pairs);
  const werSpread = spread(wers);
  const rtfSpread = spread(rtfs);
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log(`\nWER per call:  ${showSpread(werSpread, pct)}; corpus WER ${pct(total.wer)} (${total.errors} errors in ${total.referenceWords} words)`);
  console.log(`RTF per call:  ${showSpread(rtfSpread, (x) => x.toFixed(4))} (decode time / audio time, both legs); overall ${(decodeS / audioS).toFixed(4)} = ${decodeS.toFixed(2)} s for ${audioS.toFixed(1)} s of audio`);
  console.log(`load after: ${describeLoad(after)}`);
  return {
    calls,
    threads,
    model: model.id,
    model_load_ms: Math.round(loadMs),
    reference_words: total.referenceWords,
    word_errors: total.errors,
    corpus_wer: Math.round(total.wer * 10_000) / 10_000,
    ...spreadFigures('wer_per_call', werSpread, 4),
    ...spreadFigures('rtf', rtfSpread, 5),
    audio_s: Math.round(audioS * 10) / 10,
    decode_s: Math.round(decodeS * 1000) / 1000,
    ...loadFigures(before, after),
  };
}
