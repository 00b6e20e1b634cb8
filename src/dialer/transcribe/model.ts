/**
 * The speech model: which files, checked before the native runtime sees them, and loaded once.
 *
 * sherpa-onnx's native code aborts the whole process (an uncaught C++ exception) on a malformed
 * ONNX file, and exits on missing metadata, instead of returning an error. A job-queue worker must
 * not die of a bad configuration, so `loadModel` first loads the model and decodes a second of
 * silence in a child process; only when that child succeeds is the model loaded in this process.
 * The probe runs once per model per process and is bounded by `probeTimeoutMs`.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';
import { cadenzaError } from '../../common/errors.js';

export interface TranscriptionModelConfig {
  /** A folder with the encoder, decoder, joiner and tokens.txt of a streaming transducer. */
  readonly dir: string;
  /** Shown in each transcript's `model`; the folder's name by default. */
  readonly name?: string;
  /** File names inside `dir` when the folder holds several candidates (e.g. int8 and fp32). */
  readonly encoder?: string;
  readonly decoder?: string;
  readonly joiner?: string;
  readonly tokens?: string;
  readonly numThreads?: number;
  readonly probeTimeoutMs?: number;
}

export interface ModelFiles {
  readonly encoder: string;
  readonly decoder: string;
  readonly joiner: string;
  readonly tokens: string;
}

/** The subset of sherpa-onnx-node's streaming API that Cadenza uses (the package has no types). */
export interface OnlineStream {
  acceptWaveform(w: { samples: Float32Array; sampleRate: number }): void;
  inputFinished(): void;
}
export interface OnlineRecognizer {
  createStream(): OnlineStream;
  isReady(s: OnlineStream): boolean;
  decode(s: OnlineStream): void;
  getResult(s: OnlineStream): { text: string; tokens: string[]; timestamps: number[] };
}

export interface Resampler {
  resample(samples: Float32Array): Float32Array;
  flush(samples: Float32Array): Float32Array;
}

export interface LoadedModel {
  /** `name@sha256(encoder) prefix`, stored with each transcript so a re-run can tell models apart. */
  readonly id: string;
  readonly files: ModelFiles;
  readonly recognizer: OnlineRecognizer;
  /** A fresh streaming resampler (one per leg: it keeps the last samples of each chunk). */
  resampler(fromRate: number, toRate: number): Resampler;
}

function invalid(message: string, details: Record<string, unknown>): Error {
  return cadenzaError('TRANSCRIPTION_MODEL_INVALID', message, details);
}

/** Finds the four files: an explicit name, else `part.onnx`, else the single `part*.onnx`
 * (pretrained folders name them like `encoder-epoch-99-avg-1.onnx`). */
export function resolveModelFiles(config: TranscriptionModelConfig): ModelFiles {
  const dir = resolve(config.dir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw invalid(`The model folder ${config.dir} does not exist.`, { dir: config.dir });
  const names = readdirSync(dir);
  const pick = (part: 'encoder' | 'decoder' | 'joiner'): string => {
    const explicit = config[part];
    if (explicit !== undefined) {
      const p = join(dir, explicit);
      if (!existsSync(p)) throw invalid(`The model's ${part} ${explicit} is not in ${config.dir}.`, { part, file: explicit });
      return p;
    }
    if (names.includes(`${part}.onnx`)) return join(dir, `${part}.onnx`);
    const candidates = names.filter((n) => n.startsWith(part) && n.endsWith('.onnx'));
    if (candidates.length === 1) return join(dir, candidates[0]!);
    throw invalid(
      candidates.length === 0
        ? `No ${part} .onnx file in ${config.dir}.`
        : `Several ${part} files in ${config.dir} (${candidates.join(', ')}); name one in the configuration.`,
      { part, candidates },
    );
  };
  const tokens = join(dir, config.tokens ?? 'tokens.txt');
  if (!existsSync(tokens)) throw invalid(`No tokens file ${basename(tokens)} in ${config.dir}.`, { part: 'tokens' });
  return { encoder: pick('encoder'), decoder: pick('decoder'), joiner: pick('joiner'), tokens };
}

const require = createRequire(import.meta.url);

function recognizerConfig(files: ModelFiles, numThreads: number): Record<string, unknown> {
  return {
    // What the pretrained English models were trained on; sherpa-onnx resamples 8 kHz input to it.
    featConfig: { sampleRate: 16000, featureDim: 80 },
    modelConfig: { transducer: { encoder: files.encoder, decoder: files.decoder, joiner: files.joiner }, tokens: files.tokens, numThreads, provider: 'cpu', debug: 0 },
    decodingMethod: 'greedy_search',
    enableEndpoint: false,
  };
}

// The probe: runs in a child so that an abort in native code ends the child, not us.
const PROBE = `
const sherpa = require(process.argv[1]);
const rec = new sherpa.OnlineRecognizer(JSON.parse(process.argv[2]));
const s = rec.createStream();
s.acceptWaveform({ samples: new Float32Array(16000), sampleRate: 16000 });
s.inputFinished();
while (rec.isReady(s)) rec.decode(s);
rec.getResult(s);
process.stdout.write('ok');
`;

async function probe(files: ModelFiles, numThreads: number, timeoutMs: number): Promise<void> {
  const modulePath = require.resolve('sherpa-onnx-node');
  const child = spawn(process.execPath, ['-e', PROBE, modulePath, JSON.stringify(recognizerConfig(files, numThreads))], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
  });
  child.stderr.on('data', (b: Buffer) => {
    if (err.length < 8192) err += b.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | string>((done) => child.on('close', (c, sig) => done(c ?? sig ?? -1)));
  clearTimeout(timer);
  if (code !== 0 || out !== 'ok') {
    const lines = err.trim().split('\n').filter((l) => l.trim() !== '');
    throw invalid(`The model in ${basename(resolve(files.encoder, '..'))} could not be loaded by sherpa-onnx: ${lines.slice(-2).join(' | ') || `exit ${code}`}.`, {
      exit: code,
      stderr: lines.slice(-6),
    });
  }
}

async function sha256Prefix(path: string): Promise<string> {
  const h = createHash('sha256');
  const f = await open(path);
  try {
    for await (const chunk of f.createReadStream()) h.update(chunk as Buffer);
  } finally {
    await f.close();
  }
  return h.digest('hex').slice(0, 12);
}

/** Resolves, probes (in a child process) and loads the model. Throws TRANSCRIPTION_MODEL_INVALID. */
export async function loadModel(config: TranscriptionModelConfig): Promise<LoadedModel> {
  const files = resolveModelFiles(config);
  const numThreads = config.numThreads ?? 1;
  await probe(files, numThreads, config.probeTimeoutMs ?? 60_000);
  const sherpa = require('sherpa-onnx-node') as {
    OnlineRecognizer: new (c: unknown) => OnlineRecognizer;
    LinearResampler: new (from: number, to: number) => Resampler;
  };
  const recognizer = new sherpa.OnlineRecognizer(recognizerConfig(files, numThreads));
  const name = config.name ?? basename(resolve(config.dir));
  return {
    id: `${name}@${await sha256Prefix(files.encoder)}`,
    files,
    recognizer,
    resampler: (fromRate, toRate) => new sherpa.LinearResampler(fromRate, toRate),
  };
}
