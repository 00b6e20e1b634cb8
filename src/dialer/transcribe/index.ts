/** Call transcription (issue 16): the dialer's queue calls `transcribeCall` with a loaded model. */
export { loadModel, resolveModelFiles, type LoadedModel, type TranscriptionModelConfig } from './model.js';
export { transcribeCall, transcribeLeg, type CallRecording, type CallTranscript, type TranscribeOptions, type WavSource } from './transcribe.js';
export { mergeTurns, type Speaker, type SpeakerWord, type Turn } from './turns.js';
export { DEFAULT_WAV_LIMITS, encodeWav, parseWav, type Wav, type WavLimits, type WavRefusal } from './wav.js';
export { corpusWer, normalizeWords, wordErrorRate, type WerResult } from './wer.js';
export { tokensToWords, type TimedWord } from './words.js';
